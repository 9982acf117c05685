import CommandLineKit
import HelperCommands
import ModemCommands
import Testing

@testable import CellpathCLI

/// Every command of the tree has exactly one implementation in each executable its spec places it
/// in, and none elsewhere: the front hands a command to an executable that runs it, never to one
/// that lacks it.
@Suite struct CommandImplementationTests {
    /// What each executable's main.swift passes to `CellpathCLI.main`.
    static let executables: [ProgramImplementations] = [.front, .modems, .helper]

    /// Every command of the tree with its path (`cellpath sim up`), depth first.
    static func commands(_ node: CommandSpec = CommandTree.root, _ prefix: [String] = []) -> [(String, CommandSpec)] {
        let path = prefix + [node.name]
        return [(path.joined(separator: " "), node)] + node.subcommands.flatMap { commands($0, path) }
    }

    @Test func everyExecutableHasItsTable() {
        #expect(Self.executables.map(\.program) == Program.allCases)
    }

    @Test func everyCommandRunsWhereItsSpecPlacesIt() {
        for (path, command) in Self.commands() {
            let placed = command.placement?.programs ?? []
            for executable in Self.executables {
                let count = executable.commands.count { $0.command.identity == command.identity }
                #expect(
                    count == (placed.contains(executable.program) ? 1 : 0),
                    "'\(path)' has \(count) implementations in \(executable.program.rawValue); its spec places it in \(placed)"
                )
            }
        }
    }

    @Test func everyRunnableCommandHasAnImplementation() {
        let runnable = Self.commands().filter { $0.1.placement != nil }.map(\.0)
        // Groups and `help` (answered by the parser) run nothing; every other command runs somewhere.
        let groups = Self.commands().filter { $0.1.placement == nil }.map(\.0)
        #expect(
            groups.sorted() == [
                "cellpath", "cellpath bearer", "cellpath config", "cellpath help", "cellpath sim",
                "cellpath sim bearer", "cellpath sim modem"
            ])
        #expect(runnable.count == Self.commands().count - groups.count)
    }

    /// An implementation reads the options its command declares, and only those: its `run` takes
    /// the `CommandOptions` type of the command's spec (help and parser read the same type).
    @Test func everyImplementationReadsItsCommandsOptions() {
        for executable in Self.executables {
            for implementation in executable.commands {
                #expect(
                    implementation.optionsType == implementation.command.optionsType,
                    "\(executable.program.rawValue)'s '\(implementation.command.name)' reads options its spec does not declare"
                )
            }
        }
    }

    @Test func everyImplementationIsOfACommandInTheTree() {
        let tree = Set(Self.commands().map(\.1.identity))
        for executable in Self.executables {
            for implementation in executable.commands {
                #expect(
                    tree.contains(implementation.command.identity),
                    "\(executable.program.rawValue) implements '\(implementation.command.name)', which the tree lacks")
            }
        }
    }

    /// `fetch` runs in the front with `--interface`, in `cellpath-modem` with `--modem`.
    @Test func fetchIsRoutedByItsOptions() throws {
        let fetch = try #require(CommandTree.root.subcommand(named: "fetch"))
        guard case .routed(let programs, let route) = fetch.placement else {
            Issue.record("fetch is not routed: \(String(describing: fetch.placement))")
            return
        }
        #expect(programs == [.front, .modems])
        let parser = CommandLineParser(root: CommandTree.root)
        for (arguments, program) in [
            (["fetch", "-i", "wwan0", "https://a.test/"], Program.front),
            (["fetch", "-m", "0", "https://a.test/"], .modems)
        ] {
            guard case .run(_, let parsed) = try parser.parse(arguments) else {
                Issue.record("not a command to run: \(arguments)")
                continue
            }
            #expect(route(parsed, [:]) == program, "\(arguments)")
        }
    }
}
