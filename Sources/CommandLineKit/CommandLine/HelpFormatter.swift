/// Builds help and usage text in swift-argument-parser's shape: OVERVIEW / USAGE /
/// ARGUMENTS / OPTIONS / SUBCOMMANDS, then EXAMPLES.
package struct HelpFormatter {
    package let root: CommandSpec

    package init(root: CommandSpec) {
        self.root = root
    }

    /// The command at `path` (names from the root), if it exists.
    package func command(at path: [String]) -> CommandSpec? {
        var node = root
        for name in path.dropFirst() {
            guard let next = node.subcommand(named: name) else { return nil }
            node = next
        }
        return node
    }

    /// `cellpath number <phone> [--region <cc>]`.
    package func usage(for path: [String]) -> String {
        guard let node = command(at: path) else { return path.joined(separator: " ") }
        var parts = [path.joined(separator: " ")]
        if node.placement == nil, !node.subcommands.isEmpty { parts.append("<subcommand>") }
        if node.placement != nil, !node.subcommands.isEmpty { parts.append("[<subcommand>]") }
        if path.count > 1, node.options.count > 4 {
            parts.append("[<options>]")
        } else if path.count > 1 {
            for option in node.options {
                let text = option.long + (option.valueName.map { " <\($0)>" } ?? "")
                parts.append("[--\(text)]" + (option.repeatable ? " ..." : ""))
            }
        }
        for argument in node.arguments {
            let text = "<\(argument.name)>" + (argument.variadic ? " ..." : "")
            parts.append(argument.optional ? "[\(text)]" : text)
        }
        if path.count == 1 { parts.insert("[<options>]", at: 1) }
        return parts.joined(separator: " ")
    }

    /// The full help page for the command at `path`.
    package func help(for path: [String]) -> String {
        guard let node = command(at: path) else { return "" }
        var out = "OVERVIEW: \(node.abstract)\n\n"
        if let discussion = node.discussion { out += discussion + "\n\n" }
        if let privileges = node.privileges.summary { out += "PRIVILEGES: \(privileges)\n\n" }
        out += "USAGE: \(usage(for: path))\n\n"
        if !node.arguments.isEmpty {
            out += "ARGUMENTS:\n"
            for argument in node.arguments { out += row("<\(argument.name)>", argument.help) }
            out += "\n"
        }
        let isRoot = path.count == 1
        out += "OPTIONS:\n"
        for option in node.options { out += row(option.synopsis, option.help) }
        out += row(CommandLineParser.helpFlag.spec.synopsis, CommandLineParser.helpFlag.spec.help)
        if !isRoot {
            out += "\nGLOBAL OPTIONS:\n"
            for option in root.options where option.long != CommandLineParser.versionFlag.spec.long {
                out += row(option.synopsis, option.help)
            }
        }
        if !node.subcommands.isEmpty {
            out += "\nSUBCOMMANDS:\n"
            for sub in node.subcommands where !sub.hidden { out += row(sub.name, sub.abstract) }
            out +=
                "\n  See '\(root.name) help \((path.dropFirst() + ["<subcommand>"]).joined(separator: " "))' for detailed help.\n"
        }
        if isRoot {
            out += "\nEXIT CODES:\n"
            for code in ExitCode.allCases {
                let number = String(code.rawValue)
                out += "  " + number + String(repeating: " ", count: 6 - number.count) + code.meaning + "\n"
            }
        }
        if !node.examples.isEmpty {
            out += "\nEXAMPLES:\n"
            for example in node.examples { out += "  \(example.purpose)\n    \(example.commandLine)\n" }
        }
        return out
    }

    /// The text printed on stderr for a usage error.
    package func usageError(_ error: UsageError) -> String {
        let path = command(at: error.command) == nil ? [root.name] : error.command
        return
            "Error: \(error.message.terminalSafe)\nUsage: \(usage(for: path))\n  See '\(path.joined(separator: " ")) --help' for more information.\n"
    }

    /// One aligned row: name in a 24-column gutter, then the help text.
    private func row(_ name: String, _ text: String) -> String {
        let gutter = 24
        if name.count + 2 < gutter {
            return "  " + name + String(repeating: " ", count: gutter - name.count - 2) + text + "\n"
        }
        return "  " + name + "\n" + String(repeating: " ", count: gutter) + text + "\n"
    }
}
