@testable import CellpathCLI
@testable import CommandLineKit
import Glibc
import SystemSupport
import Testing

/// The parser and the runtime over cellpath's own command tree.
@Suite struct CommandTreeTests {
    /// Field mode's `--interval 0` means back to back, as no `--interval` does.
    @Test func theCheckIntervalTakesZero() throws {
        let parsed = try CommandLineParser(root: CommandTree.root).parse(["subscriber-check", "+447940448591", "--repeat", "3", "--interval", "0"])
        guard case .run(_, let command) = parsed else {
            Issue.record("not a command to run: \(parsed)")
            return
        }
        #expect(command[CheckCommands.interval] == 0)
    }

    @Test @MainActor func conversionErrorsExitWithUsage() {
        for arguments in [["fetch", "--max-hops", "ten", "https://api.truid.test/"],
                          ["sim", "bearer", "connect", "--modem", "64"],
                          ["generate-docs", "--format", "pdf"]] {
            #expect(CellpathCLI.main(arguments, environment: [:], implementations: .front) == ExitCode.usage.rawValue, "\(arguments)")
        }
        #expect(ExitCode.usage.rawValue == 64)
    }

    /// A command that Ctrl-C could not cancel does not start: when the signal watcher cannot be
    /// installed (here: one is installed already), the command fails with 70 before it runs.
    @Test @MainActor func aCommandDoesNotStartWithoutItsSignalWatcher() throws {
        let other = try SignalWatcher(signals: [SIGUSR2])
        defer { other.stop() }
        let code = CellpathCLI.main(["config", "show"], environment: ["HOME": "/nonexistent", "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"], implementations: .front)
        #expect(code == ExitCode.internalError.rawValue)
    }

    @Test func noCommandDeclaresAnOptionNameTwice() {
        func check(_ node: CommandSpec, _ path: [String]) {
            let options = node.options + (path.count > 1 ? belowTheRoot(CommandTree.root.options) : [])
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
