import CellpathCLI
import CommandLineKit
import Simulator

extension SimDownCommand {
    static func run(_ parsed: ParsedCommand, _ context: CommandContext) throws -> CommandOutcome {
        let report = try SimulatedWorld.down(prefix: try SimCommand.prefix(parsed, context))
        let title = report.wasAlreadyDown ? "simulated world \(report.prefix) was already down"
            : "simulated world \(report.prefix) is down"
        return CommandOutcome(Output(title: title, try ValueEncoder.record(report)))
    }
}
