import CellpathCore

/// The result of parsing argv against the command tree: which command, and its values, which
/// a command reads through its declarations (`options(as:)`).
package struct ParsedCommand: Sendable {
    /// Names from the root, e.g. `["cellpath", "sim", "up"]`.
    package var path: [String]
    /// Long names of the flags given.
    var flags: Set<String> = []
    /// Converted values of the options given, by long name, in order.
    var optionValues: [String: [any Sendable]] = [:]
    var arguments: [String: [String]] = [:]

    /// The command as messages name it: `cellpath sim up`.
    package var commandName: String { path.joined(separator: " ") }
}

/// A mistake in the command line: printed as `Error: …`, the usage line and a pointer to
/// `--help`, with exit code 64.
package struct UsageError: Error, Sendable, Equatable {
    package var message: String
    /// The command whose usage line is shown.
    package var command: [String]

    package init(_ message: String, command: [String]) {
        self.message = message
        self.command = command
    }

    /// A required positional argument is missing.
    package static func missingArgument(_ argument: ArgumentSpec, command: [String]) -> UsageError {
        UsageError("missing expected argument '<\(argument.name)>'", command: command)
    }

    /// An option's value did not convert.
    package static func invalidValue(
        _ text: String, for option: OptionSpec, _ problem: InvalidOptionValue,
        command: [String]
    ) -> UsageError {
        UsageError(
            "invalid \(problem.noun) '\(text)' for '--\(option.long)': expected \(problem.expectation)",
            command: command)
    }
}
