import Glibc

/// What the command line asks for.
package enum ParseResult: Sendable {
    /// Run this command with these values.
    case run(CommandSpec, ParsedCommand)
    /// Show help for the command at this path (`-h`, `--help`, `help <command>`, a bare group).
    case help([String])
    /// Show the version (`cellpath --version`).
    case version
}

/// Parses argv against the command tree: `--opt value`, `--opt=value`, `-o value`, `-ovalue`,
/// clustered short flags (`-vq`), `--` to end options. Options of the root are global and
/// accepted at every level; `--version` only at the root.
package struct CommandLineParser {
    package let root: CommandSpec

    package init(root: CommandSpec) {
        self.root = root
    }

    package static let helpFlag = Flag("help", short: "h", help: "Show help information.")
    /// Accepted at the root only; the root's options include it.
    package static let versionFlag = Flag("version", help: "Show the version.")

    package func parse(_ arguments: [String]) throws(UsageError) -> ParseResult {
        if let position = Self.firstArgumentNotUTF8() {
            throw UsageError(
                "argument \(position) is not valid UTF-8; arguments are refused, not repaired", command: [root.name])
        }
        var node = root
        var parsed = ParsedCommand(path: [root.name])
        var positionals: [String] = []
        var index = 0
        var optionsEnded = false

        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
            } else if argument == "--help" || argument == "-h" {
                return .help(parsed.path)
            } else if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                let inline = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
                guard let option = lookup(long: name, in: node, isRoot: parsed.path.count == 1) else {
                    throw unknownOption("--\(name)", in: node, path: parsed.path)
                }
                switch option.kind {
                case .value(let valueName, let convert):
                    let value =
                        if let inline { inline } else {
                            try nextValue(for: "--\(name) <\(valueName)>", arguments, &index, parsed.path)
                        }
                    try record(option, value: value, convertedBy: convert, into: &parsed)
                case .flag:
                    guard inline == nil else {
                        throw UsageError("option '--\(name)' takes no value", command: parsed.path)
                    }
                    parsed.flags.insert(option.long)
                }
            } else if argument.hasPrefix("-"), argument.count > 1 {
                var letters = Substring(argument.dropFirst())
                while let letter = letters.first {
                    letters = letters.dropFirst()
                    if letter == "h" { return .help(parsed.path) }
                    guard let option = lookup(short: letter, in: node, isRoot: parsed.path.count == 1) else {
                        throw unknownOption("-\(letter)", in: node, path: parsed.path)
                    }
                    if case .value(let valueName, let convert) = option.kind {
                        let value =
                            letters.isEmpty
                            ? try nextValue(for: "-\(letter) <\(valueName)>", arguments, &index, parsed.path)
                            : String(letters)
                        try record(option, value: value, convertedBy: convert, into: &parsed)
                        break
                    }
                    parsed.flags.insert(option.long)
                }
            } else if !node.subcommands.isEmpty, positionals.isEmpty, node.arguments.isEmpty {
                if parsed.path.count == 1, argument == "help" {
                    return .help(try helpPath(Array(arguments[index...])))
                }
                guard let next = node.subcommand(named: argument) else {
                    var message = "unknown command '\(argument)'"
                    if let near = Suggestions.nearest(to: argument, in: node.subcommands.map(\.name)) {
                        message += ". Did you mean '\(near)'?"
                    }
                    throw UsageError(message, command: parsed.path)
                }
                node = next
                parsed.path.append(argument)
            } else {
                positionals.append(argument)
            }
        }

        if parsed.path.count == 1, parsed.flags.contains(Self.versionFlag.spec.long) { return .version }
        guard node.placement != nil else { return .help(parsed.path) }
        try bind(positionals, to: node, into: &parsed)
        return .run(node, parsed)
    }

    /// The program that runs what `arguments` ask for, when their leading words alone tell it:
    /// they name a command (a group) whose commands all run in that one program, so that no
    /// option, value or later word can make another program run them, and nothing asks for help.
    /// No command's options are read. Nil otherwise: the whole command line must be parsed to
    /// tell (an option before the words, a routed command, `help`).
    package func programNamedByWords(_ arguments: [String]) -> Program? {
        let beforeEnd = arguments.prefix { $0 != "--" }
        let asksForHelp = beforeEnd.contains { argument in
            argument == "--help" || (!argument.hasPrefix("--") && argument.hasPrefix("-") && argument.contains("h"))
        }
        guard !asksForHelp else { return nil }
        var node = root
        for word in beforeEnd {
            if let program = node.soleProgram { return program }
            // As `parse` descends; a command with subcommands takes no positional argument (a rule
            // of the tree, tested), so none of the words' options are read.
            guard !word.hasPrefix("-"), let next = node.subcommand(named: word) else {
                return nil
            }
            node = next
        }
        return node.soleProgram
    }

    /// The 1-based position of the process's first argument (after the program name) that is
    /// not valid UTF-8, read from the raw argv: `CommandLine.arguments` has already replaced such
    /// bytes with U+FFFD, which would silently change a header value or a file name.
    package static func firstArgumentNotUTF8() -> Int? {
        let argv = CommandLine.unsafeArgv
        for index in 1 ..< max(1, Int(CommandLine.argc)) {
            guard let argument = argv[index] else { continue }
            let bytes = UnsafeRawBufferPointer(start: argument, count: strlen(argument))
            if String(validating: bytes, as: UTF8.self) == nil { return index }
        }
        return nil
    }

    /// The argument after an option as its value (`--region GB`, `-r GB`); `spelled` is the
    /// option as given, with its placeholder (`-r <cc>`).
    private func nextValue(
        for spelled: String, _ arguments: [String], _ index: inout Int,
        _ path: [String]
    ) throws(UsageError) -> String {
        guard index < arguments.count else {
            throw UsageError("missing value for '\(spelled)'", command: path)
        }
        index += 1
        return arguments[index - 1]
    }

    /// Resolves `help sim up` to the command path, rejecting unknown names.
    private func helpPath(_ names: [String]) throws(UsageError) -> [String] {
        var node = root
        var path = [root.name]
        for name in names where !name.hasPrefix("-") {
            guard let next = node.subcommand(named: name) else {
                var message = "unknown command '\(name)'"
                if let near = Suggestions.nearest(to: name, in: node.subcommands.map(\.name)) {
                    message += ". Did you mean '\(near)'?"
                }
                throw UsageError(message, command: path)
            }
            node = next
            path.append(name)
        }
        return path
    }

    private func lookup(long name: String, in node: CommandSpec, isRoot: Bool) -> OptionSpec? {
        availableOptions(for: node, isRoot: isRoot).first { $0.long == name }
    }

    private func lookup(short letter: Character, in node: CommandSpec, isRoot: Bool) -> OptionSpec? {
        availableOptions(for: node, isRoot: isRoot).first { $0.short == letter }
    }

    /// Every long option valid for `node`, for suggestions and help.
    package func availableOptions(for node: CommandSpec, isRoot: Bool) -> [OptionSpec] {
        node.options + (isRoot ? [] : root.options.filter { $0.long != Self.versionFlag.spec.long })
            + [Self.helpFlag.spec]
    }

    private func unknownOption(_ spelled: String, in node: CommandSpec, path: [String]) -> UsageError {
        var message = "unknown option '\(spelled)'"
        let candidates = availableOptions(for: node, isRoot: path.count == 1).map { "--\($0.long)" }
        if spelled.hasPrefix("--"), let near = Suggestions.nearest(to: spelled, in: candidates) {
            message += ". Did you mean '\(near)'?"
        }
        return UsageError(message, command: path)
    }

    /// Converts an option's value and keeps it; a value that does not convert is a usage
    /// error naming the option.
    private func record(
        _ option: OptionSpec, value: String,
        convertedBy convert: @Sendable (String) throws(InvalidOptionValue) -> any Sendable,
        into parsed: inout ParsedCommand
    ) throws(UsageError) {
        let converted: any Sendable
        do {
            converted = try convert(value)
        } catch {
            throw UsageError.invalidValue(value, for: option, error, command: parsed.path)
        }
        if option.repeatable {
            parsed.optionValues[option.long, default: []].append(converted)
        } else {
            parsed.optionValues[option.long] = [converted]
        }
    }

    private func bind(
        _ positionals: [String], to node: CommandSpec, into parsed: inout ParsedCommand
    ) throws(UsageError) {
        var remaining = positionals[...]
        for argument in node.arguments {
            if argument.variadic {
                if remaining.isEmpty, !argument.optional {
                    throw UsageError.missingArgument(argument, command: parsed.path)
                }
                parsed.arguments[argument.name] = Array(remaining)
                remaining = []
            } else if argument.joinsWords, !remaining.isEmpty {
                parsed.arguments[argument.name] = [remaining.joined(separator: " ")]
                remaining = []
            } else if let value = remaining.first {
                parsed.arguments[argument.name] = [value]
                remaining = remaining.dropFirst()
            } else if !argument.optional {
                throw UsageError.missingArgument(argument, command: parsed.path)
            }
        }
        if let extra = remaining.first {
            throw UsageError("unexpected argument '\(extra)'", command: parsed.path)
        }
    }
}
