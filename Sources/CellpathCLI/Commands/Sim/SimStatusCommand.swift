import CellpathCore
import Simulator

/// `cellpath sim status`: what is up, the modems and SIMs, bearer state and data-path counters.
enum SimStatusCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "status",
        abstract: "Show the world's state, its modems and SIMs, bearers and data-path counters.",
        options: [SimCommand.prefixOption],
        action: .blocking(run))

    static func run(_ parsed: ParsedCommand, _ context: CommandContext) throws -> CommandOutcome {
        let status = try SimulatedWorld.status(prefix: try SimCommand.prefix(parsed, context))
        return CommandOutcome(Output(title: "simulated world \(status.prefix): \(status.state.rawValue)",
                                     try record(status, context)))
    }

    /// The status with personal data masked unless `--verbose-full`.
    static func record(_ status: SimulatorStatus, _ context: CommandContext) throws -> Record {
        try ValueEncoder.record(status.redacted(context.global.disclosure))
    }
}
