import Testing
import TestSupport

/// Runs the built binary and compares exact stdout, stderr and exit code.
@Suite struct CommandLineEndToEndTests {
    @Test func version() throws {
        let result = try CellpathBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "cellpath 0.1.0\n")
        #expect(result.stderr == "")
    }

    @Test func rootHelpGoesToStdoutWithExitZero() throws {
        for arguments in [["--help"], ["-h"], ["help"], []] {
            let result = try CellpathBinary.run(arguments)
            #expect(result.status == 0, "\(arguments)")
            #expect(result.stderr == "", "\(arguments)")
            #expect(result.stdout.hasPrefix("OVERVIEW: SIM-based mobile authentication"), "\(arguments)")
            for section in ["\nUSAGE: cellpath [<options>] <subcommand>\n", "\nOPTIONS:\n", "\nSUBCOMMANDS:\n",
                            "\nEXIT CODES:\n", "  65    bad input data", "  -h, --help"] {
                #expect(result.stdout.contains(section), "\(arguments): \(section)")
            }
        }
    }

    @Test func anArgumentThatIsNotUTF8IsRefusedNotRepaired() throws {
        // bash passes the byte 0xE9 (Latin-1 é) as it is; Swift alone would turn it into U+FFFD.
        let result = try ProcessRunner.run(["bash", "-c", #"exec "$0" fetch -H $'X-A: caf\xe9' --interface cpnone0 --dns 192.0.2.53 http://x.test/"#,
                                            CellpathBinary.path])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: argument 3 is not valid UTF-8"), "\(result.stderr)")
        // The same header in UTF-8 passes the parser (and fails later, at the missing interface).
        let utf8 = try CellpathBinary.run(["fetch", "-H", "X-A: café", "--interface", "cpnone0", "--dns", "192.0.2.53", "http://x.test/"])
        #expect(utf8.status == 69, "\(utf8.stderr)")
    }

    @Test(arguments: ["X-A: a\u{1}b", "X-A: \u{1b}[31mred", "X-A: a\u{7f}"])
    func aHeaderWithAControlCharacterIsRefusedBeforeAnything(header: String) throws {
        let result = try CellpathBinary.run(["fetch", "-H", header, "--interface", "cpnone0", "--dns", "192.0.2.53", "http://x.test/"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("contains a control character"), "\(result.stderr)")
    }

    @Test func unknownOptionSuggestsTheNearest() throws {
        let result = try CellpathBinary.run(["--verison"])
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(result.stderr == """
            Error: unknown option '--verison'. Did you mean '--version'?
            Usage: cellpath [<options>] <subcommand>
              See 'cellpath --help' for more information.

            """)
    }

    @Test(arguments: ["001-01\r\nX-Inj: 1", "0010", "001-01;x", "twenty"])
    func anOperatorThatIsNotMCCMNCIsRefusedBeforeAnything(value: String) throws {
        // Exit 65 before any interface, DNS or packet: the interface here does not even exist.
        let result = try CellpathBinary.run(["fetch", "--interface", "cpnone0", "--dns", "192.0.2.53",
                                             "--operator", value, "http://api.truid.test/"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("error: invalid operator '"), "\(result.stderr)")
        #expect(!result.stderr.contains("\r") && result.stderr.split(separator: "\n").count == 2, "\(result.stderr)")
        #expect(result.stdout == "")
    }

    @Test func unknownCommand() throws {
        let result = try CellpathBinary.run(["numbr", "+447940448591"])
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(result.stderr == """
            Error: unknown command 'numbr'. Did you mean 'number'?
            Usage: cellpath [<options>] <subcommand>
              See 'cellpath --help' for more information.

            """)
    }

    @Test func invalidChoiceForAGlobalOption() throws {
        let result = try CellpathBinary.run(["--color", "pink", "number", "+447940448591"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: invalid value 'pink' for '--color': expected one of auto, always, never\n"))
    }
}
