import CommandLineKit

/// `cellpath sim exec -- CMD…`: runs a command on the simulated device.
package enum SimExecCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "exec",
        abstract: "Run a command on the simulated device (<prefix>ue) with the world's environment.",
        discussion: """
            The environment points cellpath and curl at the world's CA and API (see 'cellpath sim env').
            Put '--' before the command so that its options are not read as cellpath's. The exit
            status is the command's (128+N when signal N ended it); as in a shell, 127 when the
            command is not found and 126 when it cannot be executed. SIGINT, SIGTERM and SIGHUP
            sent to cellpath are passed on to the command, and cellpath waits for it to end.
            """,
        options: Options.self,
        placement: .program(.helper), privileges: .root,
        examples: [
            .init("A shell on the device:", "cellpath sim exec -- bash"),
            .init("List the world's modems:", "cellpath sim exec -- cellpath modems"),
            .init(
                "In the world created with --prefix lab-:", "cellpath sim exec --prefix lab- -- ip address show wwan0")
        ])

    /// `sim exec`'s options.
    package struct Options: CommandOptions {
        @VariadicArgument("command", help: "The command and its arguments.") package var command: [String]
        @SettingOption(.simPrefix) package var prefix: String?

        package init() {}
    }
}
