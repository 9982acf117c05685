import Glibc
import SystemSupport
import TestSupport
import Testing

@testable import CellpathCLI
@testable import CommandLineKit

/// `cellpath completion`: the candidates the command tree gives for a partial command line, and
/// the three shells' scripts driven by the shells themselves.
@Suite struct ShellCompletionTests {
    /// The engine over cellpath's tree, with two modems and three interfaces on the machine.
    static let engine = ShellCompletion(
        root: CommandTree.root, globalOptions: GlobalOptions.Declarations().declarations.compactMap(\.optionSpec),
        machineValues: { kind in
            switch kind {
            case .modems: ["0", "1"]
            case .interfaces: ["lo", "wlan0", "wwan0"]
            default: []
            }
        })

    static func words(_ line: [String]) -> [String] { engine.complete(line).candidates.map(\.word) }

    @Test(arguments: [
        (["sim", "u"], ["up"]),
        (["help", "sim", "p"], ["profiles"]),
        (["completion", ""], ["bash", "zsh", "fish"]),
        (["--color", ""], ["auto", "always", "never"]),
        (["fetch", "--color=n"], ["--color=never"]),
        (["bearer", "up", "--sim"], ["--sim-slot"]),
        (["subscriber-check", "-m", ""], ["0", "1", "all"]),
        (["bearer", "up", "-m", ""], ["0", "1"]),
        (["fetch", "--interface", "w"], ["wlan0", "wwan0"]),
        (["fetch", "-vi", "ww"], ["wwan0"]),
        (["bearer", "up", "--json", "--js"], []),
        (["sim", "exec", "--", "-"], []),
        (["number", "+44"], []),
        (["nosuch", ""], []),
        (["bearer", "up", "--ip-type", "ipv4"], ["ipv4", "ipv4v6"]),
        (["verify", "--provider", "t"], ["truid", "twilio"])
    ])
    func offersWhatTheTreeAllows(line: [String], expected: [String]) {
        #expect(Self.words(line) == expected, "\(line)")
    }

    @Test func theFirstWordIsAVisibleCommandWithItsAbstract() throws {
        let answer = Self.engine.complete([""])
        let names = answer.candidates.map(\.word)
        #expect(names.contains("subscriber-check") && names.contains("completion") && names.contains("sim"))
        #expect(!names.contains("generate-docs") && !names.contains("__complete"), "hidden commands")
        let sim = try #require(answer.candidates.first { $0.word == "sim" })
        #expect(sim.description == ShellCompletion.firstSentence(CommandTree.root.subcommand(named: "sim")!.abstract))
        #expect(!sim.description.isEmpty && !sim.description.contains("\n"))
    }

    @Test func fileValuesAreLeftToTheShell() {
        for line in [
            ["sim", "up", "--scenario", ""], ["doctor", "--capture", "x"], ["fetch", "--har", ""], ["report", ""]
        ] {
            let answer = Self.engine.complete(line)
            #expect(answer.completesFiles && answer.candidates.isEmpty, "\(line)")
            #expect(answer.lines == [":files"])
        }
        #expect(!Self.engine.complete(["sim", "up", "--prefix", ""]).completesFiles)
    }

    @Test func aDescriptionIsTheHelpsFirstSentence() {
        #expect(
            ShellCompletion.firstSentence("Cellular network interface (e.g. wwan0); its address. More.")
                == "Cellular network interface (e.g. wwan0); its address")
        #expect(ShellCompletion.firstSentence("Over\ntwo lines. Then more.") == "Over two lines")
        #expect(ShellCompletion.firstSentence("Ends here.") == "Ends here")
    }

    // MARK: The shells

    /// A PATH whose `cellpath` is the built one, as an installed command would be found.
    static func withPath<T>(_ body: (String) throws -> T) throws -> T {
        try TemporaryDirectory.with("cellpath-completion") { directory in
            #expect(symlink(CellpathBinary.path, directory + "/cellpath") == 0)
            return try body(directory + ":/usr/bin:/bin")
        }
    }

    static func shell(_ arguments: [String], path: String) throws -> ProcessResult {
        try ProcessRunner.run(arguments, environment: ["PATH": path, "HOME": "/tmp", "LANG": "C.UTF-8"])
    }

    @Test(arguments: [
        ("cellpath sim u", ["up"]),
        ("cellpath --color ", ["auto", "always", "never"]),
        ("cellpath --color=al", ["always"]),
        ("cellpath fetch -i l", ["lo"]),
        ("cellpath completion z", ["zsh"])
    ])
    func bashCompletesThroughItsCompletionFunction(line: String, expected: [String]) throws {
        try Self.withPath { path in
            let script = #"""
                eval "$(cellpath completion bash)"
                COMP_LINE=$1 COMP_POINT=${#1}
                _cellpath
                printf '%s\n' "${COMPREPLY[@]}"
                """#
            let result = try Self.shell(["bash", "-c", script, "bash", line], path: path)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.split(separator: "\n").map(String.init) == expected, "\(line)")
        }
    }

    @Test func bashOffersFileNamesForAFileOption() throws {
        try Self.withPath { path in
            let script = #"""
                eval "$(cellpath completion bash)"
                COMP_LINE='cellpath sim up --scenario /et' COMP_POINT=30
                _cellpath
                printf '%s\n' "${COMPREPLY[@]}"
                """#
            let result = try Self.shell(["bash", "-c", script], path: path)
            #expect(result.stdout.split(separator: "\n").contains("/etc"), "\(result.stdout)\(result.stderr)")
        }
    }

    /// zsh's completion system loads the script from `$fpath` as `_cellpath` and binds it to
    /// cellpath; its function is then run with `compadd` and `_files` recording what they get.
    @Test(arguments: [
        (["cellpath", "sim", "u"], ["up"]),
        (["cellpath", "--color", ""], ["auto", "always", "never"]),
        (["cellpath", "sim", "up", "--scenario", ""], [":files"])
    ])
    func zshCompletesThroughItsCompletionSystem(words: [String], expected: [String]) throws {
        try Self.withPath { path in
            try TemporaryDirectory.with("cellpath-zsh") { functions in
                let made = try Self.shell(
                    ["sh", "-c", "cellpath completion zsh > \(functions)/_cellpath"], path: path)
                #expect(made.status == 0, "\(made.stderr)")
                let script = """
                    fpath=(\(functions) $fpath)
                    autoload -Uz compinit && compinit -u -D
                    print -r -- "bound: $_comps[cellpath]"
                    autoload -Uz _cellpath
                    compadd() { print -l -- "${@[$(( ${@[(i)--]} + 1 )),-1]}" }
                    _files() { print -- :files }
                    words=(\(words.map { "'\($0)'" }.joined(separator: " "))) CURRENT=\(words.count)
                    _cellpath
                    """
                let result = try Self.shell(["zsh", "-f", "-c", script], path: path)
                #expect(result.status == 0, "\(result.stderr)")
                let lines = result.stdout.split(separator: "\n").map(String.init)
                #expect(lines.first == "bound: _cellpath", "\(result.stdout)")
                #expect(Array(lines.dropFirst()) == expected, "\(words)")
            }
        }
    }

    /// fish completes a command line itself with `complete -C` (and sorts what it offers).
    @Test(arguments: [
        ("cellpath sim u", ["up"]),
        ("cellpath completion ", ["bash", "fish", "zsh"]),
        ("cellpath bearer up --sim", ["--sim-slot"])
    ])
    func fishCompletesTheCommandLine(line: String, expected: [String]) throws {
        try Self.withPath { path in
            let script = "cellpath completion fish | source; complete -C '\(line)'"
            let result = try Self.shell(["fish", "--no-config", "-c", script], path: path)
            #expect(result.status == 0, "\(result.stderr)")
            let words = result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
            #expect(words == expected, "\(line): \(result.stdout)")
        }
    }

    @Test func anUnknownShellIsAUsageError() throws {
        let result = try CellpathBinary.run(["completion", "ksh"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown shell 'ksh': expected bash, zsh or fish"))
    }
}
