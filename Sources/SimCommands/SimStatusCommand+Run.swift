import CellpathCLI
import CellpathCore
import CommandLineKit
import Simulator
import SimulatorScenario

extension SimStatusCommand {
    static func run(_ options: SimCommand.Options, _ context: CommandContext) throws -> CommandOutcome {
        let status = try SimulatedWorld.status(prefix: try SimCommand.prefix(options.prefix, context))
        return CommandOutcome(
            Output(
                title: "simulated world \(status.prefix): \(status.state.rawValue)",
                try record(status, context)))
    }

    /// The status with personal data masked unless `--verbose-full`.
    static func record(_ status: SimulatorStatus, _ context: CommandContext) throws -> Record {
        try ValueEncoder.record(status.redacted(context.global.disclosure))
    }

    /// One table row per modem, for the short human summaries of `sim up` and `sim bearer`.
    static func modemTable(_ status: SimulatorStatus, _ context: CommandContext) -> [String] {
        let rows: [Value] = status.redacted(context.global.disclosure).modems.map { modem in
            var row = Record()
            row.add("modem", .int(modem.index))
            row.add("protocol", .string(modem.protocol.rawValue.uppercased()))
            row.add("control_port", .string(modem.controlPort))
            row.add("interface", .string(modem.interface))
            row.add("operator", .string("\(modem.operatorID) \(modem.operatorName)"))
            row.add("msisdn", .optional(modem.sim?.msisdn), label: "MSISDN")
            row.add("bearer", .string(modem.bearer.rawValue))
            row.add("address", .optional(modem.address))
            row.add("ipv6_address", .optional(modem.ipv6Address), label: "IPv6 address")
            return .record(row)
        }
        var record = Record()
        record.add("modems", .list(rows))
        return Renderer(json: false, color: false).render(Output(record)).split(separator: "\n").dropFirst().map(
            String.init)
    }
}
