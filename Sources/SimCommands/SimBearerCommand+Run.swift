import CellpathCLI
import CommandLineKit
import Simulator

extension SimBearerCommand {
    static func run(connect: Bool, _ options: Options, _ context: CommandContext) throws -> CommandOutcome {
        let modem = options.modem
        let prefix = try SimCommand.prefix(options.prefix, context)
        let status = try SimulatedWorld.bearer(connect: connect, modem: modem, prefix: prefix)
        let state = status.modems.first { $0.index == modem }
        var title = "modem \(modem): bearer \(connect ? "connected" : "disconnected")"
        if let state, let address = state.address { title += " on \(state.interface) with \(address)" }
        return CommandOutcome(
            Output(
                title: title, try SimStatusCommand.record(status, context),
                humanLines: SimStatusCommand.modemTable(status, context)))
    }
}
