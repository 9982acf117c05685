import CellpathCLI
import CellpathCore
import CommandLineKit
import SimulatorScenario

extension SimProfilesCommand {
    static func run(_ options: Options, _ context: CommandContext) throws -> CommandOutcome {
        if options.device != nil || options.capture != nil { return try writeCapture(options, context) }
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

    /// `--device NAME --capture FILE`: the profile as a device capture.
    private static func writeCapture(_ options: Options, _ context: CommandContext) throws -> CommandOutcome {
        guard let name = options.device, let file = options.capture else {
            throw CellpathError(.usage, "--device and --capture go together: the profile, and the file to write")
        }
        guard let profileName = DeviceProfile.Name(rawValue: name), profileName != .captured else {
            throw CellpathError(
                .usage, "no device profile \"\(name)\"", hint: "cellpath sim profiles lists the profiles")
        }
        let profile = profileName == .simulated ? DeviceProfile.simulated(.mbim) : DeviceProfile.named(profileName)
        try OutputFile.write(DeviceCapture.encoded(profile), to: file, as: context.caller)
        var record = Record()
        record.add("profile", .string(name))
        record.add("capture", .string(file))
        return CommandOutcome(Output(title: "device profile \(name) written to \(file)", record))
    }
}
