import CellpathCore
import Synchronization
import Testing

@testable import CommandLineKit

@Suite struct RendererTests {
    private var sample: Output {
        var hop = Record()
        hop.add("status", 302)
        hop.add("url", "https://api.truid.test/a")
        var record = Record()
        record.add("e164", "+447940448591", label: "E.164")
        record.add("valid", true)
        record.add("country_code", 44)
        record.add("region", .null)
        record.add("ratio", .double(1.5))
        record.add("hops", .list([.record(hop)]))
        record.add("names", .list(["a", "b"]))
        return Output(title: "+447940448591", record)
    }

    @Test func humanOutputIsAligned() {
        let text = Renderer(json: false, color: false).render(sample)
        #expect(
            text == """
                +447940448591
                E.164:        +447940448591
                valid:        yes
                country code: 44
                region:       -
                ratio:        1.5
                hops:
                  STATUS  URL
                  302     https://api.truid.test/a
                names:        a, b

                """)
    }

    @Test func mixedRecordsRenderAsAList() {
        var first = Record()
        first.add("status", 302)
        first.add("location", "/b")
        var second = Record()
        second.add("status", 200)
        var record = Record()
        record.add("hops", .list([.record(first), .record(second)]))
        #expect(
            Renderer(json: false, color: false).render(Output(record)) == """
                hops:
                  - status:   302
                    location: /b
                  - status: 200

                """)
    }

    @Test func uniformRecordsRenderAsATable() {
        func row(_ key: String, _ value: String, _ source: Value) -> Value {
            var record = Record()
            record.add("key", .string(key))
            record.add("value", .string(value))
            record.add("source", source)
            return .record(record)
        }
        var record = Record()
        record.add(
            "settings",
            .list([
                row("general.region", "GB", "flag --region"),
                row("http.hop_timeout", "5", .null)
            ]))
        #expect(
            Renderer(json: false, color: false).render(Output(record)) == """
                settings:
                  KEY               VALUE  SOURCE
                  general.region    GB     flag --region
                  http.hop_timeout  5      -

                """)
    }

    @Test func humanOutputHasNoEscapesWithoutColor() {
        #expect(!Renderer(json: false, color: false).render(sample).contains("\u{1B}"))
        #expect(Renderer(json: false, color: true).render(sample).contains("\u{1B}[1m"))
    }

    @Test func jsonOutputKeepsFieldOrderAndTypes() {
        let text = Renderer(json: true, color: true).render(sample)
        #expect(
            text == """
                {
                  "e164": "+447940448591",
                  "valid": true,
                  "country_code": 44,
                  "region": null,
                  "ratio": 1.5,
                  "hops": [
                    {
                      "status": 302,
                      "url": "https://api.truid.test/a"
                    }
                  ],
                  "names": [
                    "a",
                    "b"
                  ]
                }

                """)
    }

    @Test func instantsAreUTCTimesForPeopleAndSecondsInJSON() {
        var record = Record()
        record.add("connected_since", .time(1_796_093_563.749))
        #expect(
            Renderer(json: false, color: false).render(Output(record)) == "connected since: 2026-12-01 02:52:43 UTC\n")
        #expect(JSONWriter.line(.record(record)) == #"{"connected_since": 1796093563.749}"# + "\n")
        #expect(Renderer.utcTime(.infinity) == "-" && Renderer.utcTime(0) == "1970-01-01 00:00:00 UTC")
    }

    @Test func jsonEscapesControlCharacters() {
        #expect(JSONWriter.quoted("a\"b\\c\n\r\t\u{01}\u{7f}é") == "\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u007fé\"")
        #expect(JSONWriter.string(.list([])) == "[]")
        #expect(JSONWriter.string(.record(Record())) == "{}")
        #expect(JSONWriter.string(.double(.infinity)) == "null")
    }

    @Test func serverTextCannotDriveTheTerminal() {
        var record = Record()
        record.add("check_id", "c1\u{1B}[2J\u{1B}]0;owned\u{07}")
        record.add("detail", "line\r\nX-Fake: 1\u{202E}txt")
        let text = Renderer(json: false, color: false).render(
            Output(
                title: "t\u{1B}[31m", record, notes: ["n\u{9B}1"],
                humanLines: nil))
        #expect(
            !text.unicodeScalars.contains {
                $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B || $0.value == 0x202E || $0 == "\r"
            })
        #expect(text.contains("c1\\x1b[2J\\x1b]0;owned\\x07") && text.contains("line\\r\\nX-Fake: 1\\u{202e}txt"))
        let lines = Renderer(json: false, color: true).render(Output(record, humanLines: ["[hop 1] \u{1B}[8mhidden"]))
        #expect(lines == "[hop 1] \\x1b[8mhidden\n")
        // JSON keeps the text as it is (escaped by JSON's own rules).
        #expect(Renderer(json: true, color: false).render(Output(record)).contains(#""c1\u001b[2J"#))
    }

    @Test func quietHumanOutputIsTheTitleAlone() {
        #expect(Renderer(json: false, color: false, quiet: true).render(sample) == "+447940448591\n")
        // Without a title the whole result is the result line(s).
        #expect(
            Renderer(json: false, color: false, quiet: true).render(Output(Record(), humanLines: ["a", "b"]))
                == "a\nb\n")
        // JSON is the same with or without --quiet.
        #expect(
            Renderer(json: true, color: false, quiet: true).render(sample)
                == Renderer(json: true, color: false).render(sample))
    }

    @Test func detailsAreForPeopleOnlyAndNotWithQuietOrJSON() {
        let output = Output(
            Record(), humanLines: ["+••••91: verified"], details: ["[hop 1] GET https://a.test/ \u{1B}[2J"])
        #expect(Renderer(json: false, color: false).render(output) == "+••••91: verified\n")
        #expect(Renderer(json: false, color: false).renderDetails(output) == "[hop 1] GET https://a.test/ \\x1b[2J\n")
        #expect(Renderer(json: false, color: false, quiet: true).renderDetails(output) == "")
        #expect(Renderer(json: true, color: false).renderDetails(output) == "")
    }

    @Test func aJSONLinesSummaryIsOneLine() {
        var output = sample
        output.jsonOnOneLine = true
        let text = Renderer(json: true, color: false).render(output)
        #expect(text.hasSuffix("}\n") && text.dropLast().contains("\n") == false, "\(text)")
        #expect(text.hasPrefix(#"{"e164": "+447940448591","valid": true,"#), "\(text)")
    }

    @Test func colorModes() {
        #expect(ColorMode.auto.enabled(isTTY: true, environment: [:]))
        #expect(!ColorMode.auto.enabled(isTTY: false, environment: [:]))
        #expect(!ColorMode.auto.enabled(isTTY: true, environment: ["NO_COLOR": "1"]))
        #expect(ColorMode.always.enabled(isTTY: false, environment: ["NO_COLOR": "1"]))
        #expect(!ColorMode.never.enabled(isTTY: true, environment: [:]))
    }
}

@Suite struct ExitCodeTests {
    @Test(
        arguments: [
            (FailureKind.usage, Int32(64)), (.dataError, 65), (.noHost, 68), (.unavailable, 69), (.internalError, 70),
            (.temporary, 75), (.protocolError, 76), (.permission, 77), (.configuration, 78), (.cancelled, 130)
        ] as [(FailureKind, Int32)])
    func kindsMapToDocumentedCodes(kind: FailureKind, code: Int32) {
        #expect(ExitCode.forError(CellpathError(kind, "x")).rawValue == code)
    }

    @Test func otherErrors() {
        struct Unexpected: Error {}
        #expect(ExitCode.forError(UsageError("x", command: [])) == .usage)
        #expect(ExitCode.forError(CancellationError()) == .cancelled)
        #expect(ExitCode.forError(Unexpected()) == .internalError)
    }

    @Test func verdictCodes() {
        #expect(ExitCode.success.rawValue == 0)
        #expect(ExitCode.notVerified.rawValue == 1)
        #expect(ExitCode.simChanged.rawValue == 2)
    }
}

@Suite struct LoggingTests {
    final class Lines: LogSink, Sendable {
        private let stored = Mutex<[String]>([])
        var lines: [String] { stored.withLock { $0 } }
        func write(line: String) { stored.withLock { $0.append(line) } }
    }

    @Test func personalDataIsMaskedUnlessFull() {
        let imsi = "001010123456789"
        let sink = Lines()
        Logger(threshold: .debug, scope: "modem0", sink: sink).scoped("sim")
            .info("IMSI \(imsi, as: .imsi) token \("abc.def", as: .token)")
        #expect(sink.lines == ["info: [modem0/sim] IMSI ••••89 token [redacted]"])
        let full = Lines()
        Logger(threshold: .debug, disclosure: .full, sink: full).info("IMSI \(imsi, as: .imsi)")
        #expect(full.lines == ["info: IMSI 001010123456789"])
    }

    @Test func thresholdFiltersLevels() {
        let sink = Lines()
        let logger = Logger(threshold: .warning, sink: sink)
        logger.debug("d")
        logger.info("i")
        logger.warning("w")
        logger.error("e")
        #expect(sink.lines == ["warning: w", "error: e"])
    }

    @Test func controlCharactersInMessagesAreEscapedAndWarningsRecorded() {
        let sink = Lines()
        let warnings = WarningRecorder()
        let logger = Logger(threshold: .error, sink: sink, warnings: warnings)
        logger.warning("Location \("x\u{1B}[2Jy")")
        logger.error("bad \("a\nb")")
        #expect(sink.lines == ["error: bad a\\nb"])
        #expect(warnings.all == ["Location x\u{1B}[2Jy"])
        logger.scoped("hop 1").warning("second")
        #expect(warnings.all.count == 2)
    }

    @Test func anUnsuppressibleWarningIsPrintedWhateverTheThreshold() {
        let sink = Lines()
        let warnings = WarningRecorder()
        let logger = Logger(threshold: .error, sink: sink, warnings: warnings)
        logger.warning("hidden by --quiet")
        logger.unsuppressibleWarning("code \("SECRET", as: .code) sent without TLS")
        #expect(sink.lines == ["warning: code [redacted] sent without TLS"])
        #expect(warnings.all == ["hidden by --quiet", "code [redacted] sent without TLS"])
    }

    @Test func msisdnMaskKeepsThePlus() {
        #expect(Disclosure.redacted.reveal("+447940448591", as: .msisdn) == "+••••91")
        #expect(Disclosure.full.reveal("+447940448591", as: .msisdn) == "+447940448591")
    }
}

@Suite struct ValueEncoderTests {
    struct Hop: Encodable { var status: Int; var location: String?; var reused: Bool }
    struct Report: Encodable {
        var zeta = "last letter first"
        var alpha = 1.5
        var hops = [Hop(status: 302, location: "/b", reused: false), Hop(status: 200, location: nil, reused: true)]
        var tags: [String] = []
        enum Kind: String, Encodable { case redirect }
        var kind = Kind.redirect

        enum CodingKeys: String, CodingKey { case zeta, alpha, hops, tags, kind }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(zeta, forKey: .zeta)
            try c.encode(alpha, forKey: .alpha)
            try c.encode(hops, forKey: .hops)
            try c.encode(tags, forKey: .tags)
            try c.encode(kind, forKey: .kind)
        }
    }

    @Test(arguments: [
        ("checkID", "check_id"), ("tlsVersion", "tls_version"), ("ipv4Address", "ipv4_address"),
        ("daemonPID", "daemon_pid"), ("URLPath", "url_path"), ("status", "status"), ("firstByteMs", "first_byte_ms")
    ])
    func snakeCaseKeys(key: String, expected: String) {
        #expect(ValueEncoder.snakeCase(key) == expected)
    }

    @Test func dictionaryKeysAreDataKeptAsTheyAreAndSorted() throws {
        struct Counters: Encodable { var droppedPackets: [String: Int] }
        let record = try ValueEncoder.record(Counters(droppedPackets: ["writeFailed": 1, "bearerDisconnected": 2]))
        #expect(
            record["dropped_packets"]
                == .record(
                    Record([
                        Field(key: "bearerDisconnected", label: "bearerDisconnected", value: 2),
                        Field(key: "writeFailed", label: "writeFailed", value: 1)
                    ])))
    }

    @Test func aServersJSONIsShownInTheOrderItWasSent() throws {
        let body = #"{"type":"t","title":"Conflict","status":409,"detail":"d","zeta":{"b":1.5,"a":[true,null]}}"#
        let json = try #require(JSONValue.parse(Array(body.utf8)))
        #expect(json.serialized == body)
        #expect(JSONWriter.string(ValueEncoder.value(json)).filter { !$0.isWhitespace } == body)
        // Ambiguous documents are not JSON: a duplicate key, a trailing comma.
        #expect(JSONValue.parse(Array(#"{"check_id":"a","check_id":"b"}"#.utf8)) == nil)
        #expect(JSONValue.parse(Array(#"{"a":1,}"#.utf8)) == nil)
    }

    @Test func serverJSONKeepsItsKeysAndOrder() throws {
        let json = JSONValue.object([
            ("zeta", .int(1)), ("checkId", .string("c")), ("alpha", .array([.null, .bool(true)]))
        ])
        #expect(
            ValueEncoder.value(json)
                == .record(
                    Record([
                        Field(key: "zeta", label: "zeta", value: 1),
                        Field(key: "checkId", label: "checkId", value: "c"),
                        Field(key: "alpha", label: "alpha", value: .list([.null, true]))
                    ])))
        struct Wrapper: Encodable { var json: JSONValue }
        #expect(try ValueEncoder.record(Wrapper(json: json))["json"] == ValueEncoder.value(json))
    }

    @Test func keepsKeyOrderAndTypes() throws {
        let value = try ValueEncoder.encode(Report())
        #expect(
            JSONWriter.string(value) == """
                {
                  "zeta": "last letter first",
                  "alpha": 1.5,
                  "hops": [
                    {
                      "status": 302,
                      "location": "/b",
                      "reused": false
                    },
                    {
                      "status": 200,
                      "reused": true
                    }
                  ],
                  "tags": [],
                  "kind": "redirect"
                }
                """)
    }
}
