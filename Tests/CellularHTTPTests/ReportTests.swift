import CellpathCore
import CellularHTTP
import FoundationEssentials
import Testing

/// Redaction, rendering, HAR and input validation: no network, no root.
struct ReportTests {
    static func sampleReport() -> FetchReport {
        let hop = HopTrace(
            index: 1, method: "GET", url: "https://api.truid.test/cb?check_id=c1&code=SECRET1&x=2", status: 302,
            location: "https://app.test/done?code=SECRET2#f", remoteAddress: "203.0.113.10", remotePort: 443,
            localAddress: "100.64.23.5", localPort: 40000, connectionReused: false, tlsVersion: "TLSv1.3",
            httpVersion: "HTTP/1.1",
            timings: HopTimings(dnsMs: 1, connectMs: 2, tlsMs: 3, firstByteMs: 4, totalMs: 12),
            dnsAnswers: ["203.0.113.10"],
            responseHeaders: [
                HTTPHeader("Set-Cookie", "sid=COOKIE1; Path=/"), HTTPHeader("Location", "/done?code=SECRET2")
            ],
            requestHeaders: [
                HTTPHeader("Authorization", "Bearer TOKEN1"), HTTPHeader("Cookie", "a=COOKIE2; b=COOKIE3")
            ],
            bodyBytes: 10, headerBytes: 100, downgrade: false, startedAt: 1_700_000_000)
        let body = #"{"check_id":"c1","code":"SECRET3","reference_id":"r1"}"#
        let result = FetchResult(
            finalStatus: 200, finalURL: "https://api.truid.test/cb?code=SECRET1", finalBody: body,
            finalBodyTruncated: false, finalContentType: "application/json",
            json: .object([("check_id", .string("c1")), ("code", .string("SECRET3")), ("reference_id", .string("r1"))]),
            stoppedAt: nil)
        return FetchReport(
            interfaceName: "wwan0", localAddresses: ["100.64.23.5"], dnsServers: ["100.64.0.53"],
            hops: [hop], result: result, failure: nil, totalMs: 12)
    }

    static let secrets = ["SECRET1", "SECRET2", "SECRET3", "TOKEN1", "COOKIE1", "COOKIE2", "COOKIE3"]

    @Test func redactedReportHidesSecretsKeepsTheRest() throws {
        let r = Self.sampleReport().redacted(.redacted)
        let json = String(decoding: r.jsonData(), as: UTF8.self)
        for s in Self.secrets { #expect(!json.contains(s), "\(s) leaked") }
        #expect(r.hops[0].url == "https://api.truid.test/cb?check_id=c1&code=[redacted]&x=2")
        #expect(r.hops[0].location == "https://app.test/done?code=[redacted]#f")
        #expect(
            r.hops[0].requestHeaders == [
                HTTPHeader("Authorization", "Bearer [redacted]"),
                HTTPHeader("Cookie", "a=[redacted]; b=[redacted]")
            ])
        #expect(r.hops[0].responseHeaders[0] == HTTPHeader("Set-Cookie", "sid=[redacted]; Path=/"))
        #expect(r.result?.json?["check_id"] == .string("c1") && r.result?.json?["reference_id"] == .string("r1"))
        #expect(r.result?.json?["code"] == .string("[redacted]"))
    }

    /// A chain whose every part carries a credential that the first masks did not know.
    static func credentialReport() -> FetchReport {
        let hop = HopTrace(
            index: 1, method: "GET",
            url: "https://user:PASS1@carrier.test/id?assertion=ASSERT1&%63ode=CODE1&session=SESS1",
            status: 302, location: "http://u:PASS2@app.test/cb?check_id=c1&Auth-Code=CODE2&JSESSIONID=SESS2",
            remoteAddress: "203.0.113.10", remotePort: 443, localAddress: "100.64.23.5", localPort: 40000,
            connectionReused: false, tlsVersion: nil, httpVersion: "HTTP/1.1",
            timings: HopTimings(dnsMs: 1, connectMs: 2, tlsMs: nil, firstByteMs: 4, totalMs: 12), dnsAnswers: nil,
            responseHeaders: [HTTPHeader("Refresh", "0; url=/x?token=TOKEN2")],
            requestHeaders: [HTTPHeader("X-Api-Key", "KEY1"), HTTPHeader("Accept", "*/*")],
            bodyBytes: 10, headerBytes: 100, downgrade: false, startedAt: 1_700_000_000)
        let json = JSONValue.object([
            ("check_id", .string("c1")), ("code", .int(123456)),
            ("nested", .object([("access_token", .string("TOKEN3"))]))
        ])
        let result = FetchResult(
            finalStatus: 200, finalURL: "https://app.test/cb", finalBody: json.serialized, finalBodyTruncated: false,
            finalContentType: "application/json", json: json, stoppedAt: "https://app.test/cb?code=CODE4")
        return FetchReport(
            interfaceName: "wwan0", localAddresses: [], dnsServers: [], hops: [hop], result: result, failure: nil,
            totalMs: 12)
    }

    @Test func passwordsAssertionsSessionsEncodedNamesAndNumericCodesAreMasked() throws {
        let report = Self.credentialReport()
        let r = report.redacted(.redacted)
        let outputs = [
            String(decoding: r.jsonData(), as: UTF8.self), report.humanLines(.redacted).joined(separator: "\n"),
            String(decoding: HARWriter.har(report, disclosure: .redacted), as: UTF8.self)
        ]
        for output in outputs {
            for secret in [
                "PASS1", "PASS2", "ASSERT1", "CODE1", "SESS1", "CODE2", "SESS2", "TOKEN2", "KEY1", "TOKEN3", "123456",
                "CODE4"
            ] {
                #expect(!output.contains(secret), "\(secret) leaked")
            }
        }
        #expect(
            r.hops[0].url
                == "https://user:[redacted]@carrier.test/id?assertion=[redacted]&%63ode=[redacted]&session=[redacted]")
        #expect(
            r.hops[0].location
                == "http://u:[redacted]@app.test/cb?check_id=c1&Auth-Code=[redacted]&JSESSIONID=[redacted]")
        #expect(r.hops[0].requestHeaders == [HTTPHeader("X-Api-Key", "[redacted]"), HTTPHeader("Accept", "*/*")])
        #expect(r.result?.json?["check_id"] == .string("c1"))
        #expect(report.redacted(.full) == report)
    }

    /// Found by the `response` fuzz target (docs/fuzzing.md): a '?' inside the query ends a pair
    /// for `Credentials.queryItems`, so it must for the mask too.
    @Test func aQuestionMarkInsideTheQueryStartsAPairThatIsMasked() {
        let report = FetchReport(
            interfaceName: "wwan0", localAddresses: [], dnsServers: [],
            hops: [
                HopTrace(
                    index: 1, method: "GET", url: "https://app.test/cb?next=/done?code=CODE5&x=1", status: 200,
                    location: nil, remoteAddress: "", remotePort: 0, localAddress: "", localPort: 0,
                    connectionReused: false, tlsVersion: nil, httpVersion: "HTTP/1.1",
                    timings: HopTimings(dnsMs: 0, connectMs: 0, tlsMs: nil, firstByteMs: 0, totalMs: 0),
                    dnsAnswers: nil, responseHeaders: [], requestHeaders: [], bodyBytes: 0, headerBytes: 0,
                    downgrade: false, startedAt: 0)
            ],
            result: nil, failure: nil, totalMs: 0)
        #expect(report.redacted(.redacted).hops[0].url == "https://app.test/cb?next=/done?code=[redacted]&x=1")
    }

    /// Found by the `response` fuzz target: a secret key whose value is an array or an object
    /// has every string, number and boolean in it masked.
    @Test func everythingUnderASecretKeyIsMasked() {
        let json = JSONValue.object([
            ("tokens", .array([.string("TOKEN5")])), ("token", .array([.string("TOKEN6"), .int(7), .null])),
            ("client_secret", .object([("value", .string("SECRET6"))])), ("x", .array([.string("kept")]))
        ])
        let result = FetchResult(
            finalStatus: 200, finalURL: "https://app.test/", finalBody: json.serialized, finalBodyTruncated: false,
            finalContentType: "application/json", json: json, stoppedAt: nil)
        let report = FetchReport(
            interfaceName: "wwan0", localAddresses: [], dnsServers: [], hops: [], result: result, failure: nil,
            totalMs: 0)
        let masked = report.redacted(.redacted).result?.json
        #expect(masked?["token"] == .array([.string("[redacted]"), .string("[redacted]"), .null]))
        #expect(masked?["client_secret"] == .object([("value", .string("[redacted]"))]))
        #expect(masked?["x"] == .array([.string("kept")]))
        #expect(masked?["tokens"] == .array([.string("TOKEN5")]), "tokens is not a credential name")
    }

    @Test(arguments: [
        "code", "CODE", "%63ode", "%63%6F%64%65", "assertion", "session", "access_token", "client_secret", "x-api-key",
        "password", "jsessionid"
    ])
    func credentialNamesAreRecognised(name: String) {
        #expect(Credentials.isCredential(name))
    }

    @Test(arguments: [
        "check_id", "reference_id", "country_code", "error", "error_description", "redirect_url", "state", "x-tru-ops"
    ])
    func otherNamesAreNotCredentials(name: String) {
        #expect(!Credentials.isCredential(name))
    }

    @Test func queryItemsArePercentDecoded() {
        let items = Credentials.queryItems(of: "https://a.test/cb?check_id=c%201&%63ode=a+b&flag#error=x")
        #expect(items.map(\.name) == ["check_id", "code", "flag", "error"])
        #expect(items.map(\.value) == ["c 1", "a b", "", "x"])
    }

    @Test func fullDisclosureKeepsEverything() {
        let report = Self.sampleReport()
        #expect(report.redacted(.full) == report)
        let lines = report.humanLines(.full).joined(separator: "\n")
        #expect(lines.contains("SECRET1"))
    }

    @Test func humanLinesAreRedacted() {
        // The callback's line is the workflow's (WorkflowTests): the engine prints hops and the result.
        let lines = Self.sampleReport().humanLines(.redacted)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("[hop 1] GET https://api.truid.test/cb?check_id=c1&code=[redacted]&x=2 → 302"))
        #expect(lines[1].hasPrefix("[fetch] 200 after 1 hop in 12.0 ms via wwan0"))
        for s in Self.secrets { #expect(!lines.joined().contains(s)) }
    }

    @Test func harIsVersion12AndRedacted() throws {
        let bytes = HARWriter.har(Self.sampleReport(), disclosure: .redacted)
        let text = String(decoding: bytes, as: UTF8.self)
        for s in Self.secrets { #expect(!text.contains(s)) }
        let doc = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        guard let log = doc["log"], case .array(let entries)? = log["entries"], let entry = entries.first else {
            Issue.record("no log.entries in \(text)")
            return
        }
        #expect(log["version"] == .string("1.2"))
        #expect(entry["serverIPAddress"] == .string("203.0.113.10"))
        #expect(
            entry["startedDateTime"].map {
                if case .string(let s) = $0 { return s.hasPrefix("2023-11-14T22:13:20") } else { return false }
            } == true)
    }

    // MARK: validation before anything touches the network

    /// A path on an interface that does not exist: nothing can be sent through it.
    static let nowhere = CellularPath(interfaceName: "cpnone0", ipv4Address: "192.0.2.99", dnsServers: ["192.0.2.53"])

    @Test(arguments: [
        ("http://api.truid.test/a\r\nX: y", FetchFailureReason.malformedURL),
        ("http://api.truid.test/a\u{0}", .malformedURL),
        ("not a url", .malformedURL),
        ("http://exa mple.test/", .malformedURL),
        ("ftp://api.truid.test/", .nonHTTPScheme),
        ("file:///etc/passwd", .nonHTTPScheme),
        ("http://\(String(repeating: "a", count: 64)).example/", .malformedURL),
        ("http://\(String(repeating: "b.", count: 200))example/", .malformedURL),
        ("http://a..example/", .malformedURL),
        ("http://api.truid.test/", .noSuchInterface)
    ])
    func inputIsCheckedFirst(url: String, reason: FetchFailureReason) async {
        let report = await CellularHTTPClient(path: Self.nowhere).trace(FetchRequest(url: url))
        #expect(report.failure?.reason == reason, "\(String(describing: report.failure))")
        #expect(report.hops.isEmpty)
    }

    @Test(arguments: [
        HTTPHeader("X-A", "b\r\nX-Evil: 1"), HTTPHeader("X-A", "b\nc"), HTTPHeader("Bad Name", "v"),
        HTTPHeader("", "v"), HTTPHeader("X-A\r\n", "v"), HTTPHeader("X-A", "b\u{0}c"), HTTPHeader("X-A", "b\u{1b}[31m"),
        HTTPHeader("X-A", "b\u{7f}"), HTTPHeader("X-A", "b\u{85}c"), HTTPHeader("X-A", "b\u{0b}c")
    ])
    func headersWithCRLFOrBadNamesAreRejected(header: HTTPHeader) async {
        let report = await CellularHTTPClient(path: Self.nowhere)
            .trace(FetchRequest(url: "http://api.truid.test/", headers: [header]))
        #expect(report.failure?.reason == .invalidHeader)
    }

    @Test func aTabAndNonASCIITextAreFineInHeaderValues() async {
        // Past validation, the request fails only at the path (which does not exist).
        let report = await CellularHTTPClient(path: Self.nowhere)
            .trace(
                FetchRequest(
                    url: "http://api.truid.test/", headers: [HTTPHeader("X-A", "b\tc"), HTTPHeader("X-B", "café ✓")]))
        #expect(report.failure?.reason == .noSuchInterface, "\(String(describing: report.failure))")
    }

    @Test func fetchThrowsACellpathErrorOfTheReasonsKind() async {
        do {
            _ = try await CellularHTTPClient(path: Self.nowhere).fetch(FetchRequest(url: "gopher://x/"))
            Issue.record("fetch succeeded")
        } catch {
            #expect(error.kind == .dataError)
            #expect(error.message.contains("gopher"))
        }
    }

    @Test func badInputIsADataErrorPathProblemsAreUnavailable() {
        for r in [FetchFailureReason.malformedURL, .invalidHeader, .nonHTTPScheme, .invalidDNSServer, .localDestination]
        {
            #expect(r.kind == .dataError)
        }
        for r in [FetchFailureReason.noSuchInterface, .interfaceDown, .noAddress, .addressGone, .dnsRefused] {
            #expect(r.kind == .unavailable)
        }
        #expect(FetchFailureReason.dnsNoSuchName.kind == .noHost)
        for r in [FetchFailureReason.notHTTP, .headerTooLarge] { #expect(r.kind == .protocolError) }
        #expect(FetchFailureReason.bindRefused.kind == .permission)
        #expect(FetchFailureReason.hopTimeout.kind == .temporary)
    }
}
