import CellpathCore

/// The result of parsing argv against the command tree: which command, and its values.
struct ParsedCommand: Sendable {
    /// Names from the root, e.g. `["cellpath", "sim", "up"]`.
    var path: [String]
    var options: [String: [String]] = [:]
    var arguments: [String: [String]] = [:]

    var commandName: String { path.joined(separator: " ") }

    /// True when the flag was given.
    func flag(_ long: String) -> Bool { options[long] != nil }

    /// The last value of an option, if given.
    func value(_ long: String) -> String? { options[long]?.last }

    /// Every value of a repeatable option, in order.
    func values(_ long: String) -> [String] { options[long] ?? [] }

    /// The value of a positional argument, if given.
    func argument(_ name: String) -> String? { arguments[name]?.first }

    /// Every value of a variadic argument.
    func argumentValues(_ name: String) -> [String] { arguments[name] ?? [] }

    /// An integer option within `range`; a bad value is a usage error naming the option.
    func integer(_ long: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = value(long) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("invalid value '\(text)' for '--\(long)': expected an integer from \(range.lowerBound) to \(range.upperBound)", command: path)
        }
        return number
    }

    /// A duration option in seconds (`5`, `2.5`, `500ms`); a bad value is a usage error.
    func seconds(_ long: String) throws(UsageError) -> Double? {
        guard let text = value(long) else { return nil }
        let number: Double?
        if text.hasSuffix("ms") { number = Double(text.dropLast(2)).map { $0 / 1000 } }
        else if text.hasSuffix("s") { number = Double(text.dropLast()) }
        else { number = Double(text) }
        guard let number, number > 0, number.isFinite else {
            throw UsageError("invalid duration '\(text)' for '--\(long)': expected seconds, e.g. 5, 2.5 or 500ms", command: path)
        }
        return number
    }
}

/// A mistake in the command line: printed as `Error: …`, the usage line and a pointer to
/// `--help`, with exit code 64.
struct UsageError: Error, Sendable, Equatable {
    var message: String
    /// The command whose usage line is shown.
    var command: [String]

    init(_ message: String, command: [String]) {
        self.message = message
        self.command = command
    }
}
