import Synchronization
import Testing

@testable import CommandLineKit

/// How many values of `CountedOptions` were made: each reading of its declarations makes one.
private let countedValues = Atomic<Int>(0)

private struct CountedOptions: CommandOptions {
    @Flag("force", help: "Force.") var force: Bool

    init() { countedValues.add(1, ordering: .relaxed) }
}

private struct PhoneOptions: CommandOptions {
    @Argument("phone", help: "The number.") var phone: String
}

private struct ModemOptions: CommandOptions {
    @Option("modem", short: "m", "index", help: "Modem.", .integer(in: 0 ... 63)) var modem: Int?
}

private struct RoutedOptions: CommandOptions {
    @Flag("modem", help: "Through the modem.") var modem: Bool
}

/// Commands in several programs: a group in one, a group in two, a routed command, one in the front.
private let tree = CommandSpec(
    name: "tool", abstract: "A test tool.",
    options: RootOptions.self,
    subcommands: [
        CommandSpec(
            name: "number", abstract: "Parse.", options: PhoneOptions.self, placement: .program(.helper)),
        CommandSpec(
            name: "bearer", abstract: "Bearers.",
            subcommands: [
                CommandSpec(name: "up", abstract: "Up.", options: ModemOptions.self, placement: .program(.modems)),
                CommandSpec(name: "down", abstract: "Down.", options: CountedOptions.self, placement: .program(.modems))
            ]),
        CommandSpec(
            name: "mixed", abstract: "Two programs.",
            subcommands: [
                CommandSpec(name: "modem", abstract: "M.", options: ModemOptions.self, placement: .program(.modems)),
                CommandSpec(name: "local", abstract: "L.", placement: .program(.front))
            ]),
        CommandSpec(
            name: "fetch", abstract: "Fetch.", options: RoutedOptions.self,
            placement: .routing(among: [.front, .modems]) { (options: RoutedOptions, _) in
                options.modem ? .modems : .front
            }),
        CommandSpec(name: "config", abstract: "Config.", placement: .program(.front))
    ])

/// The front hands a command over on its leading words when they tell the program
/// (`CommandLineParser.programNamedByWords`), and parses the whole command line otherwise.
@Suite(.serialized) struct HandOverTests {
    private let parser = CommandLineParser(root: tree)

    @Test(arguments: [
        (["bearer", "up", "-m", "0", "-q"], Program.modems),
        (["bearer"], .modems),
        (["bearer", "down", "--force"], .modems),
        (["bearer", "up", "--modem", "99"], .modems),  // the usage error is the helper's to print
        (["number", "+447940448591"], .helper),
        (["mixed", "modem", "-m", "1"], .modems),
        (["mixed", "local"], .front),
        (["config"], .front)
    ])
    func wordsThatPlaceTheCommandHandItOver(arguments: [String], program: Program) {
        #expect(parser.programNamedByWords(arguments) == program)
    }

    @Test(arguments: [
        ["-v", "bearer", "up"],  // an option before the words: the root's options must be read
        ["bearer", "up", "--help"], ["bearer", "-h"], ["bearer", "up", "-qh"],  // help is the front's
        ["mixed"], ["mixed", "-v", "modem"],  // a group of two programs
        ["fetch", "--modem"],  // routed by its options
        ["help", "bearer"], ["bogus"], ["--version"], []
    ])
    func otherwiseTheWholeCommandLineIsParsed(arguments: [String]) {
        #expect(parser.programNamedByWords(arguments) == nil)
    }

    /// Where the words tell a program, the parsed command runs there.
    @Test(arguments: [["bearer", "up", "-m", "0"], ["number", "+447940448591"], ["mixed", "modem"], ["config"]])
    func theWordsAgreeWithTheParse(arguments: [String]) throws {
        guard case .run(let command, _) = try parser.parse(arguments) else {
            Issue.record("\(arguments) is not a command to run")
            return
        }
        let program = try #require(parser.programNamedByWords(arguments))
        #expect(command.placement?.programs == [program])
    }

    /// Parsing reads the declarations of the commands on the path only, not the whole tree's.
    @Test func onlyTheCommandsOnThePathAreRead() throws {
        let before = countedValues.load(ordering: .relaxed)
        _ = try parser.parse(["bearer", "up", "-m", "0"])
        _ = parser.programNamedByWords(["bearer", "down", "--force"])
        #expect(countedValues.load(ordering: .relaxed) == before)
        _ = try parser.parse(["bearer", "down", "--force"])
        #expect(countedValues.load(ordering: .relaxed) > before)
    }
}
