import Glibc
import SystemSupport
import Testing

@testable import CommandLineKit

/// The options and arguments of the test tree, one of each kind.
private struct NumberOptions: CommandOptions {
    @Argument("phone", help: "The number.", joiningWords: true) var phone: String
    @Option("region", short: "r", "cc", help: "Region.") var region: String?
    @Flag("allow-non-mobile", help: "Allow.") var allowNonMobile: Bool
}

private enum IPType: String, Sendable, CaseIterable { case ipv4, ipv6, any }

private struct FetchOptions: CommandOptions {
    @Argument("url", help: "URL.") var url: String
    @RepeatableOption("header", short: "H", "header", help: "Header.") var header: [String]
    @Option("ip-type", "type", help: "IP type.", .choice) var ipType: IPType?
    @Option("max-hops", short: "n", "n", help: "Hops.", .integer(in: 1 ... 50)) var maxHops: Int?
    @Option("delay", "seconds", help: "Delay.", .seconds) var delay: Double?
    @Option("pause", "seconds", help: "Pause.", .secondsOrZero) var pause: Double?
    @RepeatableOption("port", "n", help: "Port.", .integer(in: 1 ... 65535)) var port: [Int]
}

private struct SimUpOptions: CommandOptions {
    @Flag("foreground", help: "Stay.") var foreground: Bool
    @Option("workers", "n", help: "Workers.", .integer(in: 1 ... 8)) var workers: Int = 2
}

private struct SimExecOptions: CommandOptions {
    @VariadicArgument("command", help: "Command.") var command: [String]
}

/// A small tree with every kind of option and argument, independent of cellpath's real commands.
private let tree = CommandSpec(
    name: "tool", abstract: "A test tool.",
    options: RootOptions.self,
    subcommands: [
        CommandSpec(
            name: "number", abstract: "Parse a number.", options: NumberOptions.self, placement: .program(.front)),
        CommandSpec(name: "fetch", abstract: "Fetch.", options: FetchOptions.self, placement: .program(.front)),
        CommandSpec(
            name: "sim", abstract: "Simulator.",
            subcommands: [
                CommandSpec(name: "up", abstract: "Start.", options: SimUpOptions.self, placement: .program(.front)),
                CommandSpec(name: "exec", abstract: "Run.", options: SimExecOptions.self, placement: .program(.front))
            ])
    ])

extension ParsedCommand {
    /// One value, read through the declarations of `Options` (a required argument missing: a usage error).
    fileprivate subscript<Options: CommandOptions, Value>(_ value: KeyPath<Options, Value>) -> Value {
        get throws(UsageError) { try options(as: Options.self)[keyPath: value] }
    }
}

private func parse(_ arguments: [String]) throws(UsageError) -> ParseResult {
    try CommandLineParser(root: tree).parse(arguments)
}

private func run(_ arguments: [String]) throws -> ParsedCommand {
    guard case .run(_, let parsed) = try parse(arguments) else {
        Issue.record("expected a command to run for \(arguments)")
        throw UsageError("not a run", command: [])
    }
    return parsed
}

private func usageError(_ arguments: [String]) -> UsageError? {
    do {
        _ = try parse(arguments)
        return nil
    } catch {
        return error
    }
}

@Suite struct ParserTests {
    @Test func optionWithSeparateValue() throws {
        let parsed = try run(["number", "--region", "GB", "07940 448591"])
        #expect(parsed.path == ["tool", "number"])
        #expect(try parsed[\NumberOptions.region] == "GB")
        #expect(try parsed[\NumberOptions.phone] == "07940 448591")
    }

    @Test func optionWithEqualsValue() throws {
        #expect(try run(["number", "--region=GB", "1"])[\NumberOptions.region] == "GB")
        #expect(try run(["number", "--region=", "1"])[\NumberOptions.region] == "")
        #expect(try run(["fetch", "--header=X-A: b=c", "u"])[\FetchOptions.header] == ["X-A: b=c"])
    }

    @Test func shortOptionForms() throws {
        #expect(try run(["number", "-r", "GB", "1"])[\NumberOptions.region] == "GB")
        #expect(try run(["number", "-rGB", "1"])[\NumberOptions.region] == "GB")
        let parsed = try run(["number", "-vq", "1"])
        #expect(try parsed[\GlobalOptions.Declarations.verbose] && parsed[\GlobalOptions.Declarations.quiet])
    }

    @Test func numberWrittenInGroupsIsOneArgument() throws {
        #expect(try run(["number", "07940", "448591", "--region", "GB"])[\NumberOptions.phone] == "07940 448591")
        #expect(try run(["number", "+44", "7940", "448591"])[\NumberOptions.phone] == "+44 7940 448591")
        #expect(try run(["number", "--", "+44", "-7940"])[\NumberOptions.phone] == "+44 -7940")
        #expect(try run(["number", "07940 448591"])[\NumberOptions.phone] == "07940 448591")
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try run(["number", "--", "-44"])
        #expect(try parsed[\NumberOptions.phone] == "-44")
        let exec = try run(["sim", "exec", "--", "ip", "-4", "addr", "--help"])
        #expect(try exec[\SimExecOptions.command] == ["ip", "-4", "addr", "--help"])
    }

    @Test func globalOptionsBeforeAndAfterSubcommand() throws {
        #expect(try run(["--json", "number", "1"])[\GlobalOptions.Declarations.json])
        #expect(try run(["number", "1", "--json"])[\GlobalOptions.Declarations.json])
        #expect(try run(["sim", "--verbose", "up"])[\GlobalOptions.Declarations.verbose])
        #expect(try run(["number", "1", "--color", "never"])[\GlobalOptions.Declarations.color] == .never)
    }

    @Test func repeatableOptionKeepsEveryValue() throws {
        #expect(try run(["fetch", "-H", "A: 1", "--header", "B: 2", "u"])[\FetchOptions.header] == ["A: 1", "B: 2"])
    }

    @Test func nonRepeatableOptionKeepsTheLastValue() throws {
        #expect(try run(["number", "--region", "GB", "--region", "US", "1"])[\NumberOptions.region] == "US")
    }

    @Test func choicesAreChecked() throws {
        #expect(try run(["fetch", "--ip-type", "ipv6", "u"])[\FetchOptions.ipType] == .ipv6)
        let error = usageError(["fetch", "--ip-type", "ipv5", "u"])
        #expect(error?.message == "invalid value 'ipv5' for '--ip-type': expected one of ipv4, ipv6, any")
        #expect(
            usageError(["--color", "sometimes", "number", "1"])?.message
                == "invalid value 'sometimes' for '--color': expected one of auto, always, never")
    }

    @Test(
        arguments: [
            (["number", "--regoin", "GB", "1"], "unknown option '--regoin'. Did you mean '--region'?"),
            (["number", "--jsno", "1"], "unknown option '--jsno'. Did you mean '--json'?"),
            (
                ["number", "--allow-non-mobil", "1"],
                "unknown option '--allow-non-mobil'. Did you mean '--allow-non-mobile'?"
            ),
            (["number", "--zzzzzz", "1"], "unknown option '--zzzzzz'"),
            (["number", "-x", "1"], "unknown option '-x'"),
            (["numbr", "1"], "unknown command 'numbr'. Did you mean 'number'?"),
            (["sim", "dwn"], "unknown command 'dwn'"),
            (["sim", "uo"], "unknown command 'uo'. Did you mean 'up'?"),
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["number"], "missing expected argument '<phone>'"),
            (["fetch", "u", "v"], "unexpected argument 'v'"),
            (["number", "1", "--region"], "missing value for '--region <cc>'"),
            (["number", "1", "-r"], "missing value for '-r <cc>'"),
            (["number", "--json=yes", "1"], "option '--json' takes no value"),
            (["sim", "exec"], "missing expected argument '<command>'"),
            (["number", "1", "--version"], "unknown option '--version'")
        ] as [([String], String)])
    func usageErrors(arguments: [String], message: String) {
        #expect(usageError(arguments)?.message == message)
    }

    @Test func usageErrorNamesTheCommand() {
        #expect(usageError(["sim", "up", "--bogus"])?.command == ["tool", "sim", "up"])
    }

    @Test func helpRequests() throws {
        for (arguments, path) in [
            (["--help"], ["tool"]), (["-h"], ["tool"]), ([], ["tool"]),
            (["number", "--help"], ["tool", "number"]), (["number", "1", "-h"], ["tool", "number"]),
            (["sim"], ["tool", "sim"]), (["sim", "up", "--help"], ["tool", "sim", "up"]),
            (["help"], ["tool"]), (["help", "sim", "up"], ["tool", "sim", "up"]),
            (["number", "-vh"], ["tool", "number"])
        ] as [([String], [String])] {
            guard case .help(let shown) = try parse(arguments) else {
                Issue.record("expected help for \(arguments)")
                continue
            }
            #expect(shown == path, "\(arguments)")
        }
        #expect(usageError(["help", "nope"])?.message == "unknown command 'nope'")
    }

    @Test func helpAfterDoubleDashIsAnArgument() throws {
        #expect(try run(["number", "--", "--help"])[\NumberOptions.phone] == "--help")
    }

    @Test func version() throws {
        guard case .version = try parse(["--version"]) else {
            Issue.record("expected version")
            return
        }
    }

    @Test func integerAndDurationValues() throws {
        let parsed = try run(["fetch", "--max-hops", "10", "u"])
        #expect(try parsed[\FetchOptions.maxHops] == 10)
        #expect(throws: UsageError.self) { try parse(["fetch", "--max-hops", "ten", "u"]) }
        #expect(throws: UsageError.self) { try parse(["fetch", "--max-hops", "0", "u"]) }
        let ms = try run(["fetch", "--delay", "500ms", "u"])
        #expect(try ms[\FetchOptions.delay] == 0.5)
        #expect(try run(["fetch", "--delay", "2.5", "u"])[\FetchOptions.delay] == 2.5)
        #expect(throws: UsageError.self) { try parse(["fetch", "--delay", "-1", "u"]) }
    }

    @Test func globalOptionsInterpretation() throws {
        let full = try GlobalOptions(try run(["number", "1", "--verbose-full"]))
        #expect(full.verbose && full.disclosure == .full)
        let plain = try GlobalOptions(try run(["number", "1"]))
        #expect(!plain.verbose && plain.disclosure == .redacted && plain.color == .auto)
        #expect(throws: UsageError.self) { try GlobalOptions(try run(["number", "1", "-q", "-v"])) }
    }
}

@Suite struct TypedAccessorTests {
    @Test func valuesComeConverted() throws {
        let parsed = try run(["fetch", "-n", "7", "--ip-type=ipv4", "--delay", "2s", "--port", "80", "--port=443", "u"])
        let hops: Int? = try parsed[\FetchOptions.maxHops]
        #expect(hops == 7)
        #expect(try parsed[\FetchOptions.ipType] == .ipv4)
        #expect(try parsed[\FetchOptions.delay] == 2)
        #expect(try parsed[\FetchOptions.port] == [80, 443])
        #expect(try parsed[\FetchOptions.url] == "u")
    }

    /// An option declared with a default reads it when not given, and the value given otherwise.
    @Test func anOptionWithADefaultReadsItWhenNotGiven() throws {
        #expect(try run(["sim", "up"])[\SimUpOptions.workers] == 2)
        #expect(try run(["sim", "up", "--workers", "5"])[\SimUpOptions.workers] == 5)
        #expect(
            usageError(["sim", "up", "--workers", "9"])?.message
                == "invalid value '9' for '--workers': expected an integer from 1 to 8")
    }

    @Test func aDurationThatMayBeZeroTakesZero() throws {
        #expect(try run(["fetch", "--pause", "0", "u"])[\FetchOptions.pause] == 0)
        #expect(try run(["fetch", "--pause", "0ms", "u"])[\FetchOptions.pause] == 0)
        #expect(try run(["fetch", "--pause", "250ms", "u"])[\FetchOptions.pause] == 0.25)
    }

    @Test func absentOptionsReadAsNothing() throws {
        let parsed = try run(["fetch", "u"])
        #expect(try parsed[\FetchOptions.maxHops] == nil)
        #expect(try parsed[\FetchOptions.port] == [])
        #expect(try parsed[\FetchOptions.header] == [])
        #expect(try !parsed[\GlobalOptions.Declarations.json])
        #expect(try run(["sim", "exec", "--", "true"])[\SimExecOptions.command] == ["true"])
    }

    @Test(
        arguments: [
            (
                ["fetch", "--max-hops", "ten", "u"],
                "invalid value 'ten' for '--max-hops': expected an integer from 1 to 50"
            ),
            (["fetch", "--max-hops=51", "u"], "invalid value '51' for '--max-hops': expected an integer from 1 to 50"),
            (["fetch", "-n", "0", "u"], "invalid value '0' for '--max-hops': expected an integer from 1 to 50"),
            (["fetch", "-n-3", "u"], "invalid value '-3' for '--max-hops': expected an integer from 1 to 50"),
            (
                ["fetch", "--delay", "5x", "u"],
                "invalid duration '5x' for '--delay': expected seconds, e.g. 5, 2.5 or 500ms"
            ),
            (
                ["fetch", "--delay", "0", "u"],
                "invalid duration '0' for '--delay': expected seconds, e.g. 5, 2.5 or 500ms"
            ),
            (
                ["fetch", "--pause=-1", "u"],
                "invalid duration '-1' for '--pause': expected seconds, e.g. 0, 5, 2.5 or 500ms"
            ),
            (
                ["fetch", "--port", "80", "--port", "http", "u"],
                "invalid value 'http' for '--port': expected an integer from 1 to 65535"
            ),
            (
                ["fetch", "u", "--ip-type", "IPV4"],
                "invalid value 'IPV4' for '--ip-type': expected one of ipv4, ipv6, any"
            )
        ] as [([String], String)])
    func conversionErrorsNameTheOption(arguments: [String], message: String) {
        let error = usageError(arguments)
        #expect(error?.message == message)
        #expect(error?.command == ["tool", "fetch"])
    }

    @Test func aRequiredArgumentMissingFromTheValuesIsAUsageError() {
        let parsed = ParsedCommand(path: ["tool", "number"])
        #expect(throws: UsageError("missing expected argument '<phone>'", command: ["tool", "number"])) {
            try parsed[\NumberOptions.phone]
        }
    }

}

@Suite struct SuggestionTests {
    @Test func editDistance() {
        #expect(Suggestions.editDistance("region", "region") == 0)
        #expect(Suggestions.editDistance("regoin", "region") == 1)
        #expect(Suggestions.editDistance("", "abc") == 3)
        #expect(Suggestions.editDistance("kitten", "sitting") == 3)
    }

    @Test func nearestPicksTheClosest() {
        #expect(Suggestions.nearest(to: "--jsn", in: ["--json", "--region"]) == "--json")
        #expect(Suggestions.nearest(to: "--xyzzy", in: ["--json", "--region"]) == nil)
    }
}
