import CellpathCLI
import CellpathCore
import CommandLineKit
import Simulator
import SimulatorScenario

extension SimUpCommand {
    static func run(_ options: Options, _ context: CommandContext) throws -> CommandOutcome {
        let daemon = DaemonOptions(
            prefix: try SimCommand.prefix(options.prefix, context), scenarioPath: options.scenario,
            modemManager: options.modemManager, deviceCaptures: options.deviceCaptures)
        if options.foreground {
            try SimulatorDaemon.run(daemon)
            return CommandOutcome()
        }
        context.progress.step("starting the simulated world \(daemon.prefix)")
        let status = try SimulatedWorld.up(daemon)
        let human =
            SimStatusCommand.modemTable(status, context) + [""]
            + SimulatedWorld.instructions(prefix: status.prefix).dropFirst()
        return CommandOutcome(
            Output(
                title: "simulated world \(status.prefix) is up", try SimStatusCommand.record(status, context),
                humanLines: human))
    }
}
