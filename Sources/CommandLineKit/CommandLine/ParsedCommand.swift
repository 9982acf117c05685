import CellpathCore

/// The result of parsing argv against the command tree: which command, and its values,
/// read through the keys that declare them (`parsed[FetchCommand.maxHops]` is an `Int?`).
package struct ParsedCommand: Sendable {
    /// Names from the root, e.g. `["cellpath", "sim", "up"]`.
    package var path: [String]
    /// Long names of the flags given.
    package var flags: Set<String> = []
    /// Converted values of the options given, by long name, in order.
    package var optionValues: [String: [any Sendable]] = [:]
    package var arguments: [String: [String]] = [:]

    /// The command as messages name it: `cellpath sim up`.
    package var commandName: String { path.joined(separator: " ") }

    /// True when the flag was given.
    package subscript(flag: Flag) -> Bool { flags.contains(flag.spec.long) }

    /// The last value of the option, if given.
    package subscript<Value>(option: OptionKey<Value>) -> Value? {
        optionValues[option.spec.long]?.last as? Value
    }

    /// Every value of the repeatable option, in order.
    package subscript<Value>(option: RepeatableOptionKey<Value>) -> [Value] {
        optionValues[option.spec.long]?.compactMap { $0 as? Value } ?? []
    }

    /// The value of the required argument; the parser has already refused a command line
    /// without it.
    package subscript(argument: ArgumentKey) -> String {
        get throws(UsageError) {
            guard let value = arguments[argument.spec.name]?.first else {
                throw UsageError.missingArgument(argument.spec, command: path)
            }
            return value
        }
    }

    /// The value of the optional argument, if given.
    package subscript(argument: OptionalArgumentKey) -> String? {
        arguments[argument.spec.name]?.first
    }

    /// Every value of the variadic argument, in order.
    package subscript(variadic: VariadicArgumentKey) -> [String] {
        arguments[variadic.spec.name] ?? []
    }
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
    package static func invalidValue(_ text: String, for option: OptionSpec, _ problem: InvalidOptionValue,
                             command: [String]) -> UsageError {
        UsageError("invalid \(problem.noun) '\(text)' for '--\(option.long)': expected \(problem.expectation)", command: command)
    }
}
