import Simulator

/// `cellpath sim down`: stops everything the simulator started and deletes the world. Idempotent.
enum SimDownCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "down",
        abstract: "Stop the simulator and delete its namespaces, devices and files (also after a crash).",
        options: [SimCommand.prefixOption.spec],
        action: .blocking(run))

    static func run(_ parsed: ParsedCommand, _ context: CommandContext) throws -> CommandOutcome {
        let report = try SimulatedWorld.down(prefix: try SimCommand.prefix(parsed, context))
        let title = report.wasAlreadyDown ? "simulated world \(report.prefix) was already down"
            : "simulated world \(report.prefix) is down"
        return CommandOutcome(Output(title: title, try ValueEncoder.record(report)))
    }
}
