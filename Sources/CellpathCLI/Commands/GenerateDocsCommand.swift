import CellpathCore
import CommandLineKit
import Configuration
import ModemDiscovery

/// `cellpath generate-docs` (hidden): the help of every command as Markdown (docs/usage.md)
/// or as a man page (docs/cellpath.1), so that the docs are made from the same text as `--help`.
package enum GenerateDocsCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "generate-docs",
        abstract: "Print the help of every command as Markdown or as a man page.",
        options: Options.self,
        hidden: true,
        placement: .program(.front))

    package static func run(_ options: Options, _ context: CommandContext) throws -> CommandOutcome {
        let formatter = HelpFormatter(root: CommandTree.root)
        let text = options.format == .man ? ManPage(formatter).text : markdown(formatter)
        Terminal.writeOut(text)
        return CommandOutcome()
    }

    /// What the docs are written as.
    package enum DocumentFormat: String, Sendable, CaseIterable {
        case markdown, man
    }

    /// `generate-docs`'s options.
    package struct Options: CommandOptions {
        @Option("format", "format", help: "markdown or man (default: markdown).", .choice)
        package var format: DocumentFormat = .markdown

        package init() {}
    }

    /// Every visible command path, depth first.
    package static func paths(_ node: CommandSpec, _ prefix: [String]) -> [[String]] {
        let path = prefix + [node.name]
        return [path] + node.subcommands.filter { !$0.hidden }.flatMap { paths($0, path) }
    }

    package static func markdown(_ formatter: HelpFormatter) -> String {
        var out = "# cellpath usage\n\nGenerated from `--help` by `make docs`; do not edit by hand.\n"
        for path in paths(formatter.root, []) {
            out += "\n## `\(path.joined(separator: " "))`\n\n```\n\(formatter.help(for: path))```\n"
        }
        return out
    }
}

/// cellpath(1): NAME, SYNOPSIS, DESCRIPTION (each command), OPTIONS (global, then each
/// command's), EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES and SEE ALSO, from the command specs
/// and the exit codes. Text is filled by man(1), so it fits any width.
struct ManPage {
    let formatter: HelpFormatter

    init(_ formatter: HelpFormatter) { self.formatter = formatter }

    var text: String {
        let root = formatter.root
        let commands = GenerateDocsCommand.paths(root, []).dropFirst().compactMap { path in
            formatter.command(at: path).map { (path: path, spec: $0) }
        }
        var out = """
            .\\" Generated from the command specs by `make docs` (cellpath generate-docs --format man).
            .TH CELLPATH 1 "" "cellpath" "User Commands"
            .nh
            .ad l
            .SH NAME
            cellpath \\- \(Self.escape(root.abstract.droppingFinalPeriod))

            """
        out += ".SH SYNOPSIS\n"
        out +=
            ([[root.name]] + commands.map(\.path)).map { path in
                let usage = formatter.usage(for: path)
                let name = path.joined(separator: " ")
                return "\\fB\(Self.escape(name))\\fR" + Self.escape(String(usage.dropFirst(name.count)))
            }.joined(separator: "\n.br\n") + "\n"

        out += ".SH DESCRIPTION\n" + Self.paragraphs(root.discussion ?? root.abstract)
        for (path, spec) in commands {
            out += ".SS \(Self.escape(path.joined(separator: " ")))\n"
            out += Self.paragraphs(spec.abstract) + (spec.discussion.map(Self.paragraphs) ?? "")
            out += spec.privileges.summary.map(Self.paragraphs) ?? ""
            out += Self.examples(spec.examples)
        }

        out += ".SH OPTIONS\n"
        out += "Global options are accepted by every command, before or after the command name.\n"
        out += ".SS Global options\n"
        for option in root.options + [CommandLineParser.helpFlag.spec] { out += Self.item(option) }
        for (path, spec) in commands where !(spec.arguments.isEmpty && spec.options.isEmpty) {
            out += ".SS \(Self.escape(path.joined(separator: " ")))\n"
            for argument in spec.arguments {
                out += Self.item(
                    "\\fI<\(Self.escape(argument.name))>\\fR" + (argument.variadic ? " ..." : ""),
                    argument.help)
            }
            for option in spec.options { out += Self.item(option) }
        }

        out += ".SH EXIT STATUS\n"
        for code in ExitCode.allCases {
            out += Self.item("\\fB\(code.rawValue)\\fR", code.meaning.capitalizedFirst + ".")
        }

        out += ".SH ENVIRONMENT\n"
        out +=
            "Configuration variables override the configuration files; flags override them "
            + "(docs/configuration.md). An empty variable counts as unset.\n"
        for (name, meaning) in ConfigurationLoader.environmentVariables {
            out += Self.item("\\fB\(Self.escape(name))\\fR", meaning.capitalizedFirst + ".")
        }
        out += Self.item("\\fBXDG_CONFIG_HOME\\fR, \\fBHOME\\fR", "Locate the user configuration file (see FILES).")
        out += Self.item(
            "\\fB\(DeviceRoots.sysfsVariable)\\fR, \\fB\(DeviceRoots.devVariable)\\fR",
            "Where modem discovery looks instead of /sys and /dev; cellpath sim exec sets them to the simulated world's."
        )
        out += Self.item(
            "\\fBCELLPATH_TOKEN_CACHE\\fR",
            "The file that caches tru.ID access tokens (default: $XDG_CACHE_HOME/cellpath/tokens.json); "
                + "cellpath sim exec sets it to the world's.")
        out += Self.item("\\fBNO_COLOR\\fR", "When set, --color auto prints no colour; neither does TERM=dumb.")
        out += Self.item(
            "\\fBSUDO_UID\\fR, \\fBSUDO_GID\\fR",
            "Set by sudo. As root under sudo, cellpath follows the variables that name files, directories "
                + "or the system bus (" + ProcessEnvironment.pathOverrides.joined(separator: ", ") + ") only into "
                + "a tree that no user but root can change, else ignores them with a warning; and it opens the files "
                + "that options name (--har, --metrics-file, --password-file, --pin-file, --tru-json) with the rights "
                + "of that user. A cellpath raised by file capabilities or set-user-ID ignores all of those and the "
                + "credential variables (docs/operations.md).")

        out += ".SH FILES\n"
        let system = ConfigurationLoader.defaultSystemPath
        out += Self.item(
            "\\fI\(Self.escape(system))\\fR",
            "System configuration (INI); \(ConfigurationLoader.systemConfigEnvironment) names another.")
        out += Self.item(
            "\\fI$XDG_CONFIG_HOME/cellpath/cellpath.conf\\fR, \\fI~/.config/cellpath/cellpath.conf\\fR",
            "User configuration, over the system one.")
        out += Self.item(
            "\\fItru.json\\fR",
            "tru.ID project credentials as the tru CLI writes them; named by --tru-json, "
                + "CELLPATH_TRU_JSON or [truid] tru_json. Keep it mode 600.")
        out += Self.item(
            "\\fI/run/cellpath-sim/<prefix>/\\fR",
            "The simulated world's run directory: daemon pid file and log, test CA, credentials.")
        out += Self.item(
            "\\fI../libexec/cellpath/\\fR",
            "Next to the directory of cellpath: cellpath-modem, which runs the modem and bearer "
                + "commands, and cellpath-helper, which runs the others beyond the front's own.")

        out += ".SH EXAMPLES\n"
        for (title, lines) in Self.walkThroughs {
            out += ".PP\n\(Self.escape(title))\n.PP\n.RS 4\n.nf\n"
            out += lines.map { Self.escape($0) + "\n" }.joined()
            out += ".fi\n.RE\n"
        }

        out += ".SH SEE ALSO\n"
        out +=
            "\\fBmbimcli\\fR(1), \\fBqmicli\\fR(1), \\fBcurl\\fR(1), \\fBip\\fR(8); "
            + "README.md and docs/ in the cellpath sources (docs/usage.md has every command's help).\n"
        return out
    }

    /// A command's examples under its description: what each does, then its command line.
    package static func examples(_ examples: [CommandExample]) -> String {
        guard !examples.isEmpty else { return "" }
        return ".PP\nExamples:\n"
            + examples.map { example in
                ".PP\n\(line(example.purpose))\n.RS 4\n.nf\n\(escape(example.commandLine))\n.fi\n.RE\n"
            }.joined()
    }

    /// The EXAMPLES section, as (what it does, command lines); each line fits 80 columns with the indent.
    package static let walkThroughs: [(String, [String])] = [
        (
            "Check that a number is this SIM's (SubscriberCheck), with the tru.ID API and your project's "
                + "credentials, or through your development server; the exit code is the verdict:",
            [
                "cellpath subscriber-check +447940448591 --direct",
                "cellpath subscriber-check --server http://localhost:8080"
            ]
        ),
        ("Check a phone number and print it in E.164:", ["cellpath number +44 7940 448591"]),
        ("Show every setting, where it came from, and any that is not usable:", ["cellpath config show"]),
        (
            "Try everything on the simulated world (as root), a SubscriberCheck of its SIM included, "
                + "then remove it:",
            [
                "cellpath sim up", "cellpath sim exec -- cellpath subscriber-check --direct",
                "cellpath sim bearer connect", "cellpath sim exec -- bash",
                "cellpath sim down"
            ]
        ),
        (
            "Open a check_url through the modem only (CHECK_URL is the check_url your backend received "
                + "when it created the check; docs/simulator-api.md creates one on the simulated world):",
            [
                "cellpath fetch --interface wwan0 --dns 100.64.0.53 \"$CHECK_URL\""
            ]
        )
    ]

    /// One `.TP` item: a bold option synopsis (value placeholder in italics) and its help.
    package static func item(_ option: OptionSpec) -> String {
        var tag = "\\fB" + escape(option.short.map { "-\($0), " } ?? "") + escape("--\(option.long)") + "\\fR"
        if let valueName = option.valueName { tag += " \\fI<\(escape(valueName))>\\fR" }
        if option.repeatable { tag += " ..." }
        return item(tag, option.help)
    }

    /// One `.TP` item: `tag` (already roff) and `text` (plain).
    package static func item(_ tag: String, _ text: String) -> String {
        ".TP\n\(tag)\n\(line(text))\n"
    }

    /// Plain text as roff paragraphs: lines of one paragraph are joined (man fills them), and a
    /// blank line starts a new paragraph.
    package static func paragraphs(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .split { $0.allSatisfy(\.isWhitespace) }
            .map { ".PP\n" + line($0.map { $0.trimmingSpaces }.joined(separator: " ")) + "\n" }
            .joined()
    }

    /// One line of plain text as roff text: escaped, and protected when it begins with a control character.
    package static func line(_ text: String) -> String {
        let escaped = escape(text)
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }

    /// Escapes plain text for roff: backslashes, hyphens as minus signs (so that options can be
    /// copied), and every non-ASCII character as a named Unicode escape (whatever the locale).
    package static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case _ where !scalar.isASCII:
                out += "\\[u" + String(String(scalar.value, radix: 16, uppercase: true).paddedTo4) + "]"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

private extension String {
    var droppingFinalPeriod: String { hasSuffix(".") ? String(dropLast()) : self }
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
    var paddedTo4: String { String(repeating: "0", count: max(0, 4 - count)) + self }
}

private extension Substring {
    var trimmingSpaces: Substring {
        guard let first = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else {
            return ""
        }
        return self[first ... last]
    }
}
