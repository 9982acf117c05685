import CommandLineKit

/// `cellpath sim log`: the fake API's and the carrier's request log, one JSON object per line.
package enum SimLogCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "log",
        abstract: "Print the request log of the fake tru.ID API and the carrier (one JSON object per line).",
        options: SimCommand.Options.self,
        placement: .program(.helper), privileges: .root,
        examples: [
            .init("Print the request log:", "cellpath sim log"),
            .init("Of the world created with --prefix lab-:", "cellpath sim log --prefix lab-")
        ])
}
