/// What a shell offers for a value, an option's or an argument's (`cellpath completion`).
package enum ValueCompletion: Sendable, Equatable {
    /// Nothing: free text (a phone number, a URL).
    case none
    /// One of these words.
    case choices([String])
    /// A file's name, which the shell completes itself.
    case files
    /// A modem's index, from discovery, and `all` when the option takes it.
    case modems(includingAll: Bool)
    /// A network interface's name.
    case interfaces
}

/// The words a shell offers for the last word of a command line, read from the command tree:
/// subcommands, options, option values and arguments, each with what it is.
package struct ShellCompletion: Sendable {
    /// A word offered, and its description (a command's abstract, an option's help) for the
    /// shells that show one.
    package struct Candidate: Sendable, Equatable {
        package var word: String
        package var description: String

        package init(_ word: String, _ description: String = "") {
            self.word = word
            self.description = description
        }
    }

    /// The words offered, and whether the shell should offer file names too.
    package struct Answer: Sendable, Equatable {
        package var candidates: [Candidate] = []
        package var completesFiles = false

        package init(candidates: [Candidate] = [], completesFiles: Bool = false) {
            self.candidates = candidates
            self.completesFiles = completesFiles
        }

        /// The lines `cellpath __complete` prints: `word<TAB>description`, then `:files` when the
        /// shell completes file names.
        package var lines: [String] {
            candidates.map { $0.description.isEmpty ? $0.word : "\($0.word)\t\($0.description)" }
                + (completesFiles ? [":files"] : [])
        }
    }

    let root: CommandSpec
    /// Options every command takes (`--json`, `-v`, …).
    let globalOptions: [OptionSpec]
    /// The values known only on this machine: modem indices, interface names.
    let machineValues: @Sendable (ValueCompletion) -> [String]

    package init(
        root: CommandSpec, globalOptions: [OptionSpec],
        machineValues: @escaping @Sendable (ValueCompletion) -> [String]
    ) {
        self.root = root
        self.globalOptions = globalOptions
        self.machineValues = machineValues
    }

    /// What to offer for the last of `words` (the command line after the program's name; the
    /// last word is the one being typed, empty after a space).
    package func complete(_ words: [String]) -> Answer {
        let current = words.last ?? ""
        var node = root
        var pendingValue: OptionSpec?
        var optionsEnded = false
        var positionals: [String] = []
        var given: Set<String> = []
        for word in words.dropLast() {
            if pendingValue != nil {
                pendingValue = nil
            } else if optionsEnded || word == "-" || !word.hasPrefix("-") {
                if positionals.isEmpty, !optionsEnded, let sub = visibleSubcommand(of: node, named: word) {
                    node = sub
                } else {
                    positionals.append(word)
                }
            } else if word == "--" {
                optionsEnded = true
            } else if let option = option(named: word, of: node) {
                given.insert(option.long)
                if option.valueName != nil, !word.contains("=") { pendingValue = option }
            }
        }
        if let pendingValue { return values(pendingValue.completion, matching: current) }
        if !optionsEnded, current.hasPrefix("--"), let equals = current.firstIndex(of: "=") {
            guard let option = option(named: String(current[..<equals]), of: node) else { return Answer() }
            var answer = values(option.completion, matching: String(current[current.index(after: equals)...]))
            let prefix = current[...equals]
            answer.candidates = answer.candidates.map { Candidate(prefix + $0.word, $0.description) }
            return answer
        }
        if !optionsEnded, current.hasPrefix("-") {
            let offered = options(of: node).filter { $0.repeatable || !given.contains($0.long) }
            return Answer(
                candidates: offered.map { Candidate("--\($0.long)", Self.firstSentence($0.help)) }
                    .filter { $0.word.hasPrefix(current) })
        }
        if node.identity == root.subcommand(named: "help")?.identity {
            // `help sim up`: the words are a command's path.
            var explained = root
            for word in positionals {
                guard let sub = visibleSubcommand(of: explained, named: word) else { return Answer() }
                explained = sub
            }
            return subcommands(of: explained, matching: current)
        }
        if positionals.isEmpty, !node.subcommands.isEmpty, !optionsEnded {
            return subcommands(of: node, matching: current)
        }
        let arguments = node.arguments
        guard let argument = positionals.count < arguments.count ? arguments[positionals.count] : arguments.last,
            positionals.count < arguments.count || argument.variadic
        else { return Answer() }
        return values(argument.completion, matching: current)
    }

    private func visibleSubcommand(of node: CommandSpec, named name: String) -> CommandSpec? {
        node.subcommand(named: name).flatMap { $0.hidden ? nil : $0 }
    }

    private func subcommands(of node: CommandSpec, matching prefix: String) -> Answer {
        Answer(
            candidates: node.subcommands.filter { !$0.hidden && $0.name.hasPrefix(prefix) }
                .map { Candidate($0.name, Self.firstSentence($0.abstract)) })
    }

    /// The command's own options, then the global ones it does not declare itself.
    private func options(of node: CommandSpec) -> [OptionSpec] {
        let own = node.options
        return own + globalOptions.filter { global in !own.contains { $0.long == global.long } }
    }

    /// The option a word names: `--long`, `--long=value`, or a cluster of short flags whose
    /// last one may take the next word (`-vm`).
    private func option(named word: String, of node: CommandSpec) -> OptionSpec? {
        if word.hasPrefix("--") {
            let long = word.dropFirst(2).prefix { $0 != "=" }
            return options(of: node).first { $0.long == long }
        }
        guard let short = word.last else { return nil }
        return options(of: node).first { $0.short == short }
    }

    private func values(_ completion: ValueCompletion, matching prefix: String) -> Answer {
        let words: [String]
        switch completion {
        case .none: return Answer()
        case .files: return Answer(completesFiles: true)
        case .choices(let choices): words = choices
        case .modems(let includingAll): words = machineValues(completion) + (includingAll ? ["all"] : [])
        case .interfaces: words = machineValues(completion)
        }
        return Answer(candidates: words.filter { $0.hasPrefix(prefix) }.map { Candidate($0) })
    }

    /// A help text's first sentence, on one line: what fish and zsh show beside a candidate.
    static func firstSentence(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        var searched = line[...]
        while let end = searched.range(ofText: ". ") {
            let before = line[..<end.lowerBound]
            // "e.g. wwan0" and "i.e. …" do not end a sentence.
            if !before.hasSuffix("e.g") && !before.hasSuffix("i.e") { return String(before) }
            searched = line[end.upperBound...]
        }
        return line.hasSuffix(".") ? String(line.dropLast()) : line
    }
}
