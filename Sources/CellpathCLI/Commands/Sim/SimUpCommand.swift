import SimulatorScenario
import CellpathCore
import Simulator

/// `cellpath sim up`: builds the world and starts its daemon (detached, or in the foreground).
enum SimUpCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "up",
        abstract: "Create the simulated world and start its daemon.",
        discussion: """
            Creates the namespaces, links and routes, starts DNS, the fake tru.ID API, the carrier and
            the simulated MBIM/QMI modems, then prints how to use the world. The daemon runs detached
            (pid file and log under /run/cellpath-sim/<prefix>/) unless --foreground.
            """,
        options: [scenario.spec, SimCommand.prefixOption.spec, foreground.spec],
        action: .blocking(run))

    static let scenario = OptionKey<String>(
        "scenario", "file", help: "Scenario file (JSON, docs/simulator.md); default: the built-in world.")
    static let foreground = Flag("foreground", help: "Run the daemon in this process until SIGINT/SIGTERM.")

    static func run(_ parsed: ParsedCommand, _ context: CommandContext) throws -> CommandOutcome {
        let options = DaemonOptions(prefix: try SimCommand.prefix(parsed, context), scenarioPath: parsed[Self.scenario])
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
