import CellpathCore
import Glibc
import TestSupport
import Testing

/// Runs the built binary and compares exact stdout, stderr and exit code.
@Suite(.ownThreads) struct CommandLineEndToEndTests {
    @Test func version() throws {
        let result = try CellpathBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "cellpath 0.1.0\n")
        #expect(result.stderr == "")
    }

    @Test func versionAsJSON() throws {
        for arguments in [["--version", "--json"], ["--json", "--version"]] {
            let result = try CellpathBinary.run(arguments)
            #expect(result.status == 0)
            #expect(
                result.stdout == """
                    {
                      "name": "cellpath",
                      "version": "0.1.0",
                      "warnings": []
                    }

                    """, "\(arguments)")
        }
    }

    @Test func rootHelpGoesToStdoutWithExitZero() throws {
        for arguments in [["--help"], ["-h"], ["help"], []] {
            let result = try CellpathBinary.run(arguments)
            #expect(result.status == 0, "\(arguments)")
            #expect(result.stderr == "", "\(arguments)")
            #expect(result.stdout.hasPrefix("OVERVIEW: SIM-based mobile authentication"), "\(arguments)")
            for section in [
                "\nUSAGE: cellpath [<options>] <subcommand>\n", "\nOPTIONS:\n", "\nSUBCOMMANDS:\n",
                "\nEXIT CODES:\n", "  65    bad input data", "  -h, --help"
            ] {
                #expect(result.stdout.contains(section), "\(arguments): \(section)")
            }
        }
    }

    @Test func anArgumentThatIsNotUTF8IsRefusedNotRepaired() throws {
        // bash passes the byte 0xE9 (Latin-1 é) as it is; Swift alone would turn it into U+FFFD.
        let result = try ProcessRunner.run([
            "bash", "-c", #"exec "$0" fetch -H $'X-A: caf\xe9' --interface cpnone0 --dns 192.0.2.53 http://x.test/"#,
            CellpathBinary.path
        ])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: argument 3 is not valid UTF-8"), "\(result.stderr)")
        // The same header in UTF-8 passes the parser (and fails later, at the missing interface).
        let utf8 = try CellpathBinary.run([
            "fetch", "-H", "X-A: café", "--interface", "cpnone0", "--allow-any-interface", "--dns", "192.0.2.53",
            "http://x.test/"
        ])
        #expect(utf8.status == 69, "\(utf8.stderr)")
    }

    @Test(arguments: ["X-A: a\u{1}b", "X-A: \u{1b}[31mred", "X-A: a\u{7f}"])
    func aHeaderWithAControlCharacterIsRefusedBeforeAnything(header: String) throws {
        let result = try CellpathBinary.run([
            "fetch", "-H", header, "--interface", "cpnone0", "--dns", "192.0.2.53", "http://x.test/"
        ])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("contains a control character"), "\(result.stderr)")
    }

    @Test func unknownOptionSuggestsTheNearest() throws {
        let result = try CellpathBinary.run(["--verison"])
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(
            result.stderr == """
                Error: unknown option '--verison'. Did you mean '--version'?
                Usage: cellpath [<options>] <subcommand>
                  See 'cellpath --help' for more information.

                """)
    }

    @Test(arguments: ["001-01\r\nX-Inj: 1", "0010", "001-01;x", "twenty"])
    func anOperatorThatIsNotMCCMNCIsRefusedBeforeAnything(value: String) throws {
        // Exit 65 before any interface, DNS or packet: the interface here does not even exist.
        let result = try CellpathBinary.run([
            "fetch", "--interface", "cpnone0", "--dns", "192.0.2.53",
            "--operator", value, "http://api.truid.test/"
        ])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("error: invalid operator '"), "\(result.stderr)")
        #expect(!result.stderr.contains("\r") && result.stderr.split(separator: "\n").count == 2, "\(result.stderr)")
        #expect(result.stdout == "")
    }

    @Test func unknownCommand() throws {
        let result = try CellpathBinary.run(["numbr", "+447940448591"])
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(
            result.stderr == """
                Error: unknown command 'numbr'. Did you mean 'number'?
                Usage: cellpath [<options>] <subcommand>
                  See 'cellpath --help' for more information.

                """)
    }

    @Test func invalidChoiceForAGlobalOption() throws {
        let result = try CellpathBinary.run(["--color", "pink", "number", "+447940448591"])
        #expect(result.status == 64)
        #expect(
            result.stderr.hasPrefix("Error: invalid value 'pink' for '--color': expected one of auto, always, never\n"))
    }

    /// `cellpath fetch` on an interface that does not exist: what is checked before it is reached.
    static func fetch(_ options: [String], json: Bool = false) throws -> ProcessResult {
        try CellpathBinary.run(
            ["fetch", "--interface", "cpnone0", "--dns", "192.0.2.53"] + options + ["http://api.truid.test/"]
                + (json ? ["--json"] : []))
    }

    @Test func unreadableOrInvalidCABundlesAreRefusedBeforeAnyPacket() throws {
        let missing = try Self.fetch(["--cacert", "/nonexistent/ca.pem"])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(
            missing.stderr.hasPrefix(
                "error: couldn't read the CA bundle /nonexistent/ca.pem: No such file or directory\n"))
        let notPEM = try Self.fetch(["--cacert", "/etc/hostname"])
        #expect(
            notPEM.status == 65 && notPEM.stderr.contains("/etc/hostname holds no PEM certificate"), "\(notPEM.stderr)")
    }

    @Test func anUnreadableCABundleNamesWhereItWasSet() throws {
        let flag = try Self.fetch(["--cacert", "/nonexistent/ca.pem"])
        #expect(
            flag.stderr.hasSuffix(
                "\nhint: flag --cacert names it: a PEM file of CA certificates that this user can read\n"),
            "\(flag.stderr)")
        let variable = try CellpathBinary.run(
            ["fetch", "--interface", "cpnone0", "--dns", "192.0.2.53", "http://api.truid.test/"],
            environment: ["CELLPATH_CA_FILE": "/nonexistent/ca.pem"])
        #expect(variable.status == 66)
        #expect(
            variable.stderr.hasSuffix(
                "\nhint: environment CELLPATH_CA_FILE names it: a PEM file of CA certificates that this user can read\n"
            ),
            "\(variable.stderr)")
    }

    @Test func anUnwritableHARPathIsRefusedBeforeAnyPacket() throws {
        for path in ["/nonexistent/trace.har", "/tmp", "/proc/trace.har"] {
            let result = try Self.fetch(["--har", path])
            #expect(result.status == 73, "\(path): \(result.stderr)")
            #expect(result.stderr.hasPrefix("error: couldn't write --har \(path): "), "\(result.stderr)")
        }
        // A path that can be written is left as it was: nothing created before the chain.
        let fresh = "/tmp/cellpath-har-check-\(getpid()).har"
        _ = try Self.fetch(["--har", fresh])
        #expect(access(fresh, F_OK) != 0)
    }

    @Test(arguments: ["lo", "cpnone0"])
    func anInterfaceThatIsNoModemsIsRefused(interface: String) throws {
        // No modem in an empty sysfs: the message says so and names the way out.
        let result = try CellpathBinary.run(
            ["fetch", "--interface", interface, "--dns", "192.0.2.53", "http://x/"],
            environment: ["CELLPATH_SYSFS_ROOT": "/nonexistent"])
        #expect(result.status == 64)
        #expect(
            result.stderr.hasPrefix(
                "Error: '\(interface)' is not a modem's network interface: no modem was found in /nonexistent\n"),
            "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "\nhint: a check must leave through the SIM's bearer; to test on another interface, add --allow-any-interface\n"
            ))
    }

    @Test func aMissingInterfaceOrDNSIsTheSameKindOfUsageError() throws {
        let noInterface = try CellpathBinary.run(["fetch", "--dns", "192.0.2.53", "http://api.truid.test/"])
        let noDNS = try CellpathBinary.run(["fetch", "--interface", "cpnone0", "http://api.truid.test/"])
        for result in [noInterface, noDNS] {
            #expect(result.status == 64)
            #expect(result.stderr.hasPrefix("Error: missing '--"), "\(result.stderr)")
            #expect(result.stderr.contains("\nUsage: cellpath fetch "), "\(result.stderr)")
        }
    }

    @Test func everyFailureUnderJSONIsOneErrorObject() throws {
        // A parse error, a usage error found by the command, a data error and an unavailable path.
        let cases: [([String], Int32, String)] = [
            (["fetch", "--max-hops", "0", "--json", "http://x/"], 64, "usage"),
            (["fetch", "--dns", "192.0.2.53", "--json", "http://x/"], 64, "usage"),
            (
                ["fetch", "--interface", "cpnone0", "--dns", "192.0.2.53", "--print", "code", "--json", "http://x/"],
                64, "usage"
            ),
            (
                ["fetch", "--interface", "cpnone0", "--dns", "192.0.2.53", "--operator", "x", "--json", "http://x/"],
                65, "dataError"
            ),
            (["fetch", "--interface", "cpnone0", "--dns", "192.0.2.53", "--json", "http://x/"], 64, "usage"),
            (
                [
                    "fetch", "--interface", "cpnone0", "--allow-any-interface", "--dns", "192.0.2.53", "--json",
                    "http://x/"
                ], 69, "unavailable"
            ),
            (["numbr", "--json"], 64, "usage")
        ]
        for (arguments, status, kind) in cases {
            let result = try CellpathBinary.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            let json = try JSONValue.parse(result.stdout)
            #expect(json["error"]?["kind"] == .string(kind), "\(arguments): \(result.stdout)")
            #expect(json["error"]?["exit_code"] == .int(Int(status)), "\(arguments)")
            #expect(
                json["error"]?["message"]?.stringValue?.isEmpty == false && json["warnings"] == .array([]),
                "\(arguments)")
        }
    }
}

/// `-q` prints only results and errors (a titled result: its title line alone), `-v` adds debug
/// logs, for every command that runs without root.
@Suite(.ownThreads) struct QuietAndVerboseEndToEndTests {
    @Test(arguments: [
        (["number", "+44 20 7946 0000"], true), (["number", "+447940448591"], true), (["config", "show"], false),
        (["sim", "status", "--prefix", "cpqv-"], true), (["generate-docs", "--format", "markdown"], false),
        (["modems"], false)
    ])
    func quietKeepsResultsAndVerboseAddsDebugLogs(command: [String], titled: Bool) throws {
        let normal = try CellpathBinary.run(command)
        let quiet = try CellpathBinary.run(command + ["-q"])
        let verbose = try CellpathBinary.run(command + ["-v"])
        for run in [normal, quiet, verbose] { #expect(run.status == normal.status, "\(command)") }
        let firstLine = normal.stdout.split(separator: "\n", maxSplits: 1).first.map { $0 + "\n" } ?? ""
        #expect(quiet.stdout == (titled ? firstLine : normal.stdout), "\(command): \(quiet.stdout)")
        #expect(!titled || normal.stdout.count > firstLine.count, "\(command) prints more than its title without -q")
        #expect(quiet.stderr == "", "\(command): \(quiet.stderr)")
        #expect(!normal.stderr.contains("debug:"), "\(command)")
        let version = try CellpathBinary.run(["--version"]).stdout.dropLast()
        let name = command.prefix { !$0.hasPrefix("-") && !$0.hasPrefix("+") }.prefix(2).joined(separator: " ")
        #expect(verbose.stderr.contains("debug: \(version): \(name) (cellpath"), "\(command): \(verbose.stderr)")
    }

    @Test func aWarningIsKeptFromStderrByQuietButNotFromJSON() throws {
        // A fixed-line number: SubscriberCheck needs a mobile one, so number warns.
        let normal = try CellpathBinary.run(["number", "+44 20 7946 0000"])
        #expect(normal.stderr.hasPrefix("warning: "), "\(normal.stderr)")
        let quiet = try CellpathBinary.run(["number", "+44 20 7946 0000", "-q", "--json"])
        #expect(quiet.stderr == "")
        let warnings = try JSONValue.parse(quiet.stdout)["warnings"]?.arrayValue
        #expect(warnings?.count == 1 && warnings?.first?.stringValue?.contains("mobile") == true, "\(quiet.stdout)")
    }
}
