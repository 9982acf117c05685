import CommandLineKit
import Configuration

/// `cellpath config show`: every setting's effective value (secrets masked) and its origin, or
/// why it is not usable.
package enum ConfigShowCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "show",
        abstract: "Show the effective configuration, where each value came from, and the files read.",
        discussion: """
            A setting whose value is not valid, or comes from a file that cannot be parsed or a
            tru.json that cannot be read, is shown with its error; only the commands that need it
            fail (exit 78). config show itself exits 0 when it could show the configuration: check
            the error column (or settings[].error in --json) to validate a configuration.
            """,
        options: Options.self,
        placement: .program(.front),
        examples: [
            .init("Show every setting and where it came from:", "cellpath config show"),
            .init("Show the settings of another server profile:", "cellpath config show --profile staging"),
            .init("As JSON, to validate a configuration in a script:", "cellpath config show --json")
        ])

    /// Every setting's option.
    package struct Options: CommandOptions {
        @SettingOption(.region) package var region: String?
        @SettingOption(.profile) package var profile: String?
        @SettingOption(.serverURL) package var serverURL: String?
        @SettingOption(.truJSON) package var truJSON: String?
        @SettingOption(.dataResidency) package var dataResidency: String?
        @SettingOption(.apiBase) package var apiBase: String?
        @SettingOption(.caFile) package var caFile: String?
        @SettingOption(.simPrefix) package var simPrefix: String?
        @SettingOption(.hopTimeout) package var hopTimeout: String?
        @SettingOption(.timeout) package var timeout: String?
        @SettingOption(.apn) package var apn: String?

        package init() {}
    }

    package static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        let configuration = try ConfigurationOptions.load(options, context)
        var record = Record()
        record.add(
            "files",
            .list(
                configuration.files.map { file in
                    var row = Record()
                    row.add("path", .string(file.path))
                    row.add("role", .string(file.role.rawValue))
                    row.add("status", .string(file.status.text))
                    return .record(row)
                }))
        record.add(
            "settings",
            .list(
                configuration.entries.map { entry in
                    var row = Record()
                    row.add("key", .string(entry.key))
                    row.add("value", .optional(entry.value))
                    row.add("secret", .bool(entry.isSecret))
                    row.add("source", .optional(entry.origin?.description))
                    row.add("error", .optional(entry.error))
                    return .record(row)
                }))
        record.add("warnings", .list(configuration.warnings.map(Value.string)))
        let unusable = configuration.entries.filter { $0.error != nil }.map(\.key)
        let notes =
            unusable.isEmpty
            ? []
            : [
                "not usable: \(unusable.joined(separator: ", ")) (see ERROR); commands that need them fail with exit 78"
            ]
        return CommandOutcome(Output(record, notes: notes))
    }
}

extension ConfigurationFile.Status {
    /// `loaded`, `missing`, `unreadable: <reason>` or `invalid: <reason>`.
    var text: String {
        switch self {
        case .loaded: "loaded"
        case .missing: "missing"
        case .unreadable(let reason): "unreadable: \(reason)"
        case .invalid(let reason): "invalid: \(reason)"
        }
    }
}
