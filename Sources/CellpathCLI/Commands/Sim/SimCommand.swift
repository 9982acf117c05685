import CommandLineKit

/// `cellpath sim`: the simulated cellular world (modems, carrier, tru.ID API) in network namespaces.
/// Its commands run in `cellpath-helper` (implemented in Sources/SimCommands), the executable that links the simulator.
package enum SimCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "sim",
        abstract: "Run a simulated cellular world: modems, carrier and tru.ID API in network namespaces.",
        discussion: """
            Three namespaces (<prefix>ue, <prefix>carrier, <prefix>inet) hold the device with its Wi-Fi
            and cellular interfaces, the operator's core with its DNS and subscriber identification, and
            the internet with a fake tru.ID API. Nothing leaves them. Needs root. See docs/simulator.md.
            """,
        subcommands: [
            SimUpCommand.spec, SimDownCommand.spec, SimStatusCommand.spec, SimBearerCommand.spec,
            SimExecCommand.spec, SimEnvCommand.spec, SimLogCommand.spec, SimProfilesCommand.spec,
            SimModemCommand.spec, SimModemCommand.suspend, SimModemCommand.resume
        ],
        examples: [
            .init("Create the world (as root):", "cellpath sim up"),
            .init("Run a SubscriberCheck on its device:", "cellpath sim exec -- cellpath subscriber-check --direct"),
            .init("Remove it, with everything it started:", "cellpath sim down")
        ])

    /// The options of a `sim` command that takes nothing but the world's `--prefix` (the
    /// `sim.prefix` setting's option, one name for every command that takes it).
    package struct Options: CommandOptions {
        @SettingOption(.simPrefix) package var prefix: String?

        package init() {}
    }
}
