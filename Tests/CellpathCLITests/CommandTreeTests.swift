import CellpathCore
import Glibc
import SystemSupport
import Testing

@testable import CellpathCLI
@testable import CommandLineKit

/// The parser and the runtime over cellpath's own command tree.
@Suite struct CommandTreeTests {
    /// Field mode's `--interval 0` means back to back, as no `--interval` does.
    @Test func theCheckIntervalTakesZero() throws {
        let parsed = try CommandLineParser(root: CommandTree.root).parse([
            "subscriber-check", "+447940448591", "--repeat", "3", "--interval", "0"
        ])
        guard case .run(_, let command) = parsed else {
            Issue.record("not a command to run: \(parsed)")
            return
        }
        #expect(try command.options(as: DeviceCheckOptions.self).field.interval == 0)
    }

    /// In the program that parses them: the front hands `sim …` to `cellpath-helper` before parsing.
    @Test @MainActor func conversionErrorsExitWithUsage() {
        for (arguments, program) in [
            (["fetch", "--max-hops", "ten", "https://api.truid.test/"], Program.front),
            (["sim", "bearer", "connect", "--modem", "64"], .helper),
            (["generate-docs", "--format", "pdf"], .front)
        ] {
            let code = CellpathCLI.main(
                arguments, environment: [:], implementations: ProgramImplementations(program, []))
            #expect(code == ExitCode.usage.rawValue, "\(arguments)")
        }
        #expect(ExitCode.usage.rawValue == 64)
    }

    /// Every command's words hand it to the program its spec places it in, or to none (the
    /// whole command line is then parsed first): a routed command, or a group of several programs.
    @Test func theWordsOfEveryCommandHandItToItsProgram() {
        let parser = CommandLineParser(root: CommandTree.root)
        func check(_ node: CommandSpec, _ words: [String]) {
            let program = parser.programNamedByWords(words)
            switch node.placement {
            case .program(let placed): #expect(program == nil || program == placed, "\(words)")
            case .routed, nil: #expect(program == nil || !node.subcommands.isEmpty, "\(words)")
            }
            for sub in node.subcommands { check(sub, words + [sub.name]) }
        }
        check(CommandTree.root, [])
        #expect(parser.programNamedByWords(["bearer", "up", "-m", "0", "-q"]) == .modems)
        #expect(parser.programNamedByWords(["fetch", "-m", "0", "https://api.truid.test/"]) == nil)
        #expect(parser.programNamedByWords(["fetch", "--interface", "wwan0", "https://api.truid.test/"]) == nil)
    }

    /// The hand-over reads no options (`programNamedByWords`) because a word after a command with
    /// subcommands can only be one of them: no such command takes a positional argument.
    @Test func noCommandWithSubcommandsTakesAPositionalArgument() {
        func check(_ node: CommandSpec, _ path: [String]) {
            if !node.subcommands.isEmpty { #expect(node.arguments.isEmpty, "\(path)") }
            for sub in node.subcommands { check(sub, path + [sub.name]) }
        }
        check(CommandTree.root, [CommandTree.root.name])
    }

    /// A command that Ctrl-C could not cancel does not start: when the signal watcher cannot be
    /// installed (here: one is installed already), the command fails with 70 before it runs.
    @Test @MainActor func aCommandDoesNotStartWithoutItsSignalWatcher() throws {
        let other = try SignalWatcher(signals: [SIGUSR2])
        defer { other.stop() }
        let code = CellpathCLI.main(
            ["config", "show"],
            environment: ["HOME": "/nonexistent", "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"],
            implementations: .front)
        #expect(code == ExitCode.internalError.rawValue)
    }

    @Test func noCommandDeclaresAnOptionNameTwice() {
        func check(_ node: CommandSpec, _ path: [String]) {
            let options =
                node.options + (path.count > 1 ? belowTheRoot(CommandTree.root.options) : [])
                + [CommandLineParser.helpFlag.spec]
            let longs = options.map(\.long), shorts = options.compactMap(\.short)
            #expect(Set(longs).count == longs.count, "\(path): \(longs)")
            #expect(Set(shorts).count == shorts.count, "\(path): \(shorts)")
            let arguments = node.arguments.map(\.name)
            #expect(Set(arguments).count == arguments.count, "\(path): \(arguments)")
            for sub in node.subcommands { check(sub, path + [sub.name]) }
        }
        func belowTheRoot(_ globals: [OptionSpec]) -> [OptionSpec] {
            globals.filter { $0.long != CommandLineParser.versionFlag.spec.long }
        }
        check(CommandTree.root, [CommandTree.root.name])
    }
}

/// `--ip-type` speaks one vocabulary, with one default, on every command that takes it.
@Suite struct IPTypeOptionTests {
    static func commands(_ node: CommandSpec = CommandTree.root, _ prefix: [String] = []) -> [([String], CommandSpec)] {
        let path = prefix + [node.name]
        return [(path, node)] + node.subcommands.flatMap { commands($0, path) }
    }

    @Test func everyCommandDeclaresTheSameIPTypeOption() throws {
        let declared = Self.commands().compactMap { path, node in
            node.options.first { $0.long == "ip-type" }.map { (path, $0) }
        }
        #expect(declared.map { $0.0.joined(separator: " ") } == ["cellpath fetch", "cellpath bearer up"])
        for (path, option) in declared {
            #expect(option.help == ConfigurationOptions.ipType.spec.help, "\(path)")
            #expect(option.valueName == "type", "\(path)")
        }
    }

    @Test(arguments: [["fetch", "https://a.test/"], ["bearer", "up"]])
    func ipTypeTakesTheBearerFamilies(command: [String]) throws {
        let parser = CommandLineParser(root: CommandTree.root)
        for (text, family) in [("ipv4", BearerIPType.ipv4), ("ipv6", .ipv6), ("ipv4v6", .ipv4v6), ("any", .ipv4v6)] {
            guard case .run(_, let parsed) = try parser.parse(command + ["--ip-type", text]) else {
                Issue.record("not a command to run: \(command)")
                return
            }
            let declared: BearerIPType? =
                if command[0] == "fetch" {
                    try parsed.options(as: FetchCommand.Options.self).ipType
                } else {
                    try parsed.options(as: BearerUpCommand.Options.self).ipType
                }
            #expect(declared == family, "\(command) --ip-type \(text)")
        }
        #expect(
            throws: UsageError(
                "invalid value 'v6' for '--ip-type': expected one of ipv4, ipv6, ipv4v6",
                command: ["cellpath"] + command.prefix { !$0.hasPrefix("https") })
        ) {
            try parser.parse(command + ["--ip-type", "v6"])
        }
    }
}
