import Simulator

/// `cellpath sim bearer connect|disconnect`: drives a modem's data path directly (a test hook
/// beside the MBIM/QMI control planes) and configures its wwan interface on the device.
enum SimBearerCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "bearer",
        abstract: "Connect or disconnect a simulated bearer directly, without MBIM/QMI.",
        subcommands: [command(connect: true), command(connect: false)])

    static let modem = OptionKey<Int>("modem", "index", help: "Modem index in the scenario (default: 0).", .integer(in: 0...63))

    static func command(connect: Bool) -> CommandSpec {
        CommandSpec(
            name: connect ? "connect" : "disconnect",
            abstract: connect
                ? "Open the modem's data path and give its wwan interface the bearer address."
                : "Close the modem's data path and remove the bearer address.",
            options: [modem.spec, SimCommand.prefixOption.spec],
            action: .blocking { parsed, context in
                let modem = parsed[Self.modem] ?? 0
                let status = try SimulatedWorld.bearer(connect: connect, modem: modem, prefix: try SimCommand.prefix(parsed, context))
                let state = status.modems.first { $0.index == modem }
                var title = "modem \(modem): bearer \(connect ? "connected" : "disconnected")"
                if let state, let address = state.address { title += " on \(state.interface) with \(address)" }
                return CommandOutcome(Output(title: title, try SimStatusCommand.record(status, context),
                                             humanLines: SimStatusCommand.modemTable(status, context)))
            })
    }
}
