import CellpathCLI
import CellpathCore
import CommandLineKit
import Simulator
import SimulatorScenario

extension SimUpCommand {
    static func run(_ parsed: ParsedCommand, _ context: CommandContext) throws -> CommandOutcome {
        let options = DaemonOptions(prefix: try SimCommand.prefix(parsed, context), scenarioPath: parsed[Self.scenario],
                                    modemManager: parsed[Self.modemManager])
        if parsed[Self.foreground] {
            try SimulatorDaemon.run(options)
            return CommandOutcome()
        }
        context.progress.step("starting the simulated world \(options.prefix)")
        let status = try SimulatedWorld.up(options)
        let human = SimStatusCommand.modemTable(status, context) + [""] + SimulatedWorld.instructions(prefix: status.prefix).dropFirst()
        return CommandOutcome(Output(title: "simulated world \(status.prefix) is up", try SimStatusCommand.record(status, context),
                                     humanLines: human))
    }
}
