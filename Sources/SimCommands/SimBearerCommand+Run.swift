import CellpathCLI
import CommandLineKit
import Simulator

extension SimBearerCommand {
    static func run(connect: Bool, _ parsed: ParsedCommand, _ context: CommandContext) throws -> CommandOutcome {
        let modem = parsed[Self.modem] ?? 0
        let status = try SimulatedWorld.bearer(connect: connect, modem: modem, prefix: try SimCommand.prefix(parsed, context))
        let state = status.modems.first { $0.index == modem }
        var title = "modem \(modem): bearer \(connect ? "connected" : "disconnected")"
        if let state, let address = state.address { title += " on \(state.interface) with \(address)" }
        return CommandOutcome(Output(title: title, try SimStatusCommand.record(status, context),
                                     humanLines: SimStatusCommand.modemTable(status, context)))
    }
}
