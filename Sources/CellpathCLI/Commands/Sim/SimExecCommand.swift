import Simulator

/// `cellpath sim exec -- CMD…`: runs a command on the simulated device.
enum SimExecCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "exec",
        abstract: "Run a command on the simulated device (<prefix>ue) with the world's environment.",
        discussion: """
            The environment points cellpath and curl at the world's CA and API (see 'cellpath sim env').
            Put '--' before the command so that its options are not read as cellpath's. The exit
            status is the command's.
            """,
        arguments: [command.spec],
        options: [SimCommand.prefixOption.spec],
        action: .blocking(run))

    static let command = VariadicArgumentKey("command", help: "The command and its arguments.")

    static func run(_ parsed: ParsedCommand, _ context: CommandContext) throws -> CommandOutcome {
        let status = try SimulatedWorld.exec(prefix: try SimCommand.prefix(parsed, context),
                                             command: parsed[Self.command])
        return CommandOutcome(exitStatus: status)
    }
}
