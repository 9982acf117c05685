import CommandLineKit

/// `cellpath sim status`: what is up, the modems and SIMs, bearer state and data-path counters.
package enum SimStatusCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "status",
        abstract: "Show the world's state, its modems and SIMs, bearers and data-path counters.",
        options: SimCommand.Options.self,
        placement: .program(.helper), privileges: .root,
        examples: [
            .init("Show the world:", "cellpath sim status"),
            .init(
                "With the SIMs' numbers and identities unmasked, as JSON:", "cellpath sim status --verbose-full --json")
        ])
}
