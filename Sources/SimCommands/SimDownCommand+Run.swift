import CellpathCLI
import CommandLineKit
import Simulator

extension SimDownCommand {
    static func run(_ options: SimCommand.Options, _ context: CommandContext) throws -> CommandOutcome {
        let report = try SimulatedWorld.down(prefix: try SimCommand.prefix(options.prefix, context))
        let title =
            report.wasAlreadyDown
            ? "simulated world \(report.prefix) was already down"
            : "simulated world \(report.prefix) is down"
        return CommandOutcome(Output(title: title, try ValueEncoder.record(report)))
    }
}
