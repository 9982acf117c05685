import Simulator

/// `cellpath sim log`: the fake API's and the carrier's request log, one JSON object per line.
enum SimLogCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "log",
        abstract: "Print the request log of the fake tru.ID API and the carrier (one JSON object per line).",
        options: [SimCommand.prefixOption.spec],
        action: .blocking(run))

    static func run(_ parsed: ParsedCommand, _ context: CommandContext) throws -> CommandOutcome {
        let lines = try SimulatedWorld.requestLog(prefix: try SimCommand.prefix(parsed, context))
        for line in lines { Terminal.writeOut(line + "\n") }
        return CommandOutcome()
    }
}
