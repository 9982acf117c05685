/// `cellpath generate-docs` (hidden): the help of every command as Markdown (docs/usage.md)
/// or as a man page (docs/cellpath.1), so that the docs are made from the same text as `--help`.
enum GenerateDocsCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "generate-docs",
        abstract: "Print the help of every command as Markdown or as a man page.",
        options: [format.spec],
        hidden: true,
        action: .blocking { parsed, _ in
            let formatter = HelpFormatter(root: CommandTree.root)
            let text = parsed[Self.format] == .man ? manPage(formatter) : markdown(formatter)
            Terminal.writeOut(text)
            return CommandOutcome()
        })

    /// What the docs are written as.
    enum DocumentFormat: String, Sendable, CaseIterable {
        case markdown, man
    }

    static let format = OptionKey<DocumentFormat>("format", "format", help: "markdown or man (default: markdown).", .choice)

    /// Every visible command path, depth first.
    static func paths(_ node: CommandSpec, _ prefix: [String]) -> [[String]] {
        let path = prefix + [node.name]
        return [path] + node.subcommands.filter { !$0.hidden }.flatMap { paths($0, path) }
    }

    static func markdown(_ formatter: HelpFormatter) -> String {
        var out = "# cellpath usage\n\nGenerated from `--help` by `make docs`; do not edit by hand.\n"
        for path in paths(formatter.root, []) {
            out += "\n## `\(path.joined(separator: " "))`\n\n```\n\(formatter.help(for: path))```\n"
        }
        return out
    }

    static func manPage(_ formatter: HelpFormatter) -> String {
        var out = ".TH CELLPATH 1 \"\" \"cellpath\" \"User Commands\"\n"
        out += ".SH NAME\ncellpath \\- \(escape(formatter.root.abstract))\n"
        for path in paths(formatter.root, []) {
            out += ".SH \(escape(path.joined(separator: " ").uppercased()))\n.nf\n"
            out += escape(formatter.help(for: path))
            out += ".fi\n"
        }
        out += ".SH SEE ALSO\nThe README and docs/ of the cellpath sources.\n"
        return out
    }

    /// Escapes roff: backslashes, and lines that begin with a dot or an apostrophe.
    static func escape(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let escaped = line.replacingBackslashes()
            return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
        }.joined(separator: "\n")
    }
}

private extension Substring {
    func replacingBackslashes() -> String {
        var out = ""
        for character in self { out += character == "\\" ? "\\e" : String(character) }
        return out
    }
}
