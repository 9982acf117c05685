import Configuration

/// `cellpath config show`: every setting's effective value (secrets masked) and its origin.
enum ConfigShowCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "show",
        abstract: "Show the effective configuration, where each value came from, and the files read.",
        options: ConfigurationOptions.all.map(\.spec),
        action: .async(run))

    static func run(_ parsed: ParsedCommand, _ context: CommandContext) async throws -> CommandOutcome {
        let configuration = try ConfigurationOptions.load(parsed, context)
        var record = Record()
        record.add("files", .list(configuration.files.map { file in
            var row = Record()
            row.add("path", .string(file.path))
            row.add("role", .string(file.role.rawValue))
            row.add("status", .string(file.status.text))
            return .record(row)
        }))
        record.add("settings", .list(configuration.entries.map { entry in
            var row = Record()
            row.add("key", .string(entry.key))
            row.add("value", .optional(entry.value))
            row.add("secret", .bool(entry.isSecret))
            row.add("source", .optional(entry.origin?.description))
            return .record(row)
        }))
        record.add("warnings", .list(configuration.warnings.map(Value.string)))
        return CommandOutcome(Output(record))
    }
}

extension ConfigurationFile.Status {
    /// `loaded`, `missing`, or `unreadable: <reason>`.
    var text: String {
        switch self {
        case .loaded: "loaded"
        case .missing: "missing"
        case .unreadable(let reason): "unreadable: \(reason)"
        }
    }
}
