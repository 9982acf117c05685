import Testing

@testable import CellpathCLI
@testable import CommandLineKit

/// Every command's help ends with examples that run the command it documents.
@Suite struct HelpExamplesTests {
    /// Every visible command of cellpath, as its path from the root.
    static let paths = GenerateDocsCommand.paths(CommandTree.root, [])

    /// The words of a shell command line (quotes removed; `$VAR` kept as written).
    static func words(_ line: String) -> [String] {
        var words: [String] = []
        var word = ""
        var quote: Character?
        var inWord = false
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == " " {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }

    /// The arguments after `cellpath` of an example: inside `$(…)` if it is there, after any
    /// `NAME=value` assignments, up to a redirection or a pipe.
    static func cellpathArguments(_ commandLine: String) -> [String]? {
        var line = Substring(commandLine)
        if let start = line.firstRange(of: "$("), let end = line[start.upperBound...].firstIndex(of: ")") {
            line = line[start.upperBound ..< end]
        }
        let words = Self.words(String(line)).drop { $0.contains("=") && !$0.hasPrefix("-") }
            .prefix { ![">", ">>", "<", "|", ";", "&&", "||"].contains($0) }
        guard words.first == "cellpath" else { return nil }
        return Array(words.dropFirst())
    }

    @Test(arguments: paths)
    func helpEndsWithTwoOrThreeExamples(path: [String]) throws {
        let formatter = HelpFormatter(root: CommandTree.root)
        let command = try #require(formatter.command(at: path))
        #expect((2 ... 3).contains(command.examples.count), "\(path): \(command.examples.count) examples")
        let help = formatter.help(for: path)
        let section = try #require(help.firstRange(of: "\nEXAMPLES:\n"), "\(path) has no EXAMPLES section")
        let expected = command.examples.map { "  \($0.purpose)\n    \($0.commandLine)\n" }.joined()
        #expect(String(help[section.upperBound...]) == expected)
    }

    @Test(arguments: paths)
    func examplesRunTheCommandTheyDocument(path: [String]) throws {
        let command = try #require(HelpFormatter(root: CommandTree.root).command(at: path))
        for example in command.examples {
            let arguments = try #require(
                Self.cellpathArguments(example.commandLine), "not a cellpath command: \(example.commandLine)")
            switch try CommandLineParser(root: CommandTree.root).parse(arguments) {
            case .run(_, let parsed):
                #expect(parsed.path.starts(with: path), "\(example.commandLine) runs \(parsed.commandName)")
            case .help:
                #expect(path == ["cellpath"] || path == ["cellpath", "help"], "\(example.commandLine) asks for help")
            case .version:
                Issue.record("\(example.commandLine) asks for the version")
            }
            // The man page shows them 11 columns in, and must fit 80.
            #expect(example.commandLine.count <= 69, "too wide for the man page: \(example.commandLine)")
        }
    }

    @Test func manPageShowsEveryCommandsExamplesAndACheck() {
        let formatter = HelpFormatter(root: CommandTree.root)
        let page = ManPage(formatter).text
        for path in Self.paths.dropFirst() {
            for example in formatter.command(at: path)?.examples ?? [] {
                #expect(page.contains("\n" + ManPage.escape(example.commandLine) + "\n"), "\(example.commandLine)")
            }
        }
        let section = page.split(separator: ".SH ").first { $0.hasPrefix("EXAMPLES\n") } ?? ""
        #expect(section.contains(ManPage.escape("cellpath subscriber-check +447940448591 --direct")))
    }

    @Test func shellWordsOfAnExample() {
        #expect(
            Self.cellpathArguments("cellpath fetch -i wwan0 \"$CHECK_URL\"") == ["fetch", "-i", "wwan0", "$CHECK_URL"])
        #expect(Self.cellpathArguments("eval \"$(cellpath sim env)\"") == ["sim", "env"])
        #expect(Self.cellpathArguments("CELLPATH_REGION=GB cellpath config show") == ["config", "show"])
        #expect(Self.cellpathArguments("cellpath completion zsh > _cellpath") == ["completion", "zsh"])
        #expect(Self.cellpathArguments("cellpath completion fish | source") == ["completion", "fish"])
        #expect(Self.cellpathArguments("ip address") == nil)
    }
}
