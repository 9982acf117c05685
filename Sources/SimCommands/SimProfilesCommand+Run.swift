import CellpathCLI
import CommandLineKit
import SimulatorScenario

extension SimProfilesCommand {
    static func run(_ options: NoOptions, _ context: CommandContext) throws -> CommandOutcome {
        let rows: [Value] = DeviceZooRow.all.map { profile in
            var row = Record()
            row.add("profile", .string(profile.name))
            row.add("models", .string(profile.models))
            row.add("bus", .string(profile.bus))
            row.add("ids", .string(profile.ids), label: "IDs")
            row.add("driver", .string(profile.driver))
            row.add("protocol", .string(profile.protocol))
            row.add("ports", .list(profile.ports.map { .string($0) }))
            row.add("net_device", .string(profile.netDevice))
            return .record(row)
        }
        var record = Record()
        record.add("profiles", .list(rows))
        return CommandOutcome(Output(title: "\(rows.count) device profiles", record))
    }
}
