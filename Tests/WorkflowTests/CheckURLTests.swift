import CellpathCore
import CellularHTTP
import Testing
import Workflow

/// The check_url step's tru.ID knowledge: callback recognition, its redaction and lines, the
/// operator header. No network, no root.
struct CheckURLTests {
    static func sampleReport() -> CheckURLReport {
        let body = #"{"check_id":"c1","code":"SECRET3","reference_id":"r1"}"#
        let json = JSONValue.parse(Array(body.utf8))
        let hop = HopTrace(
            index: 1, method: "GET", url: "https://api.truid.test/cb?check_id=c1&code=SECRET1", status: 200,
            location: nil, remoteAddress: "203.0.113.10", remotePort: 443, localAddress: "100.64.23.5",
            localPort: 40000, connectionReused: false, tlsVersion: "TLSv1.3", httpVersion: "HTTP/1.1",
            timings: HopTimings(dnsMs: 1, connectMs: 2, tlsMs: 3, firstByteMs: 4, totalMs: 12),
            dnsAnswers: ["203.0.113.10"], responseHeaders: [], requestHeaders: [], bodyBytes: body.utf8.count,
            headerBytes: 100, downgrade: false, startedAt: 1_700_000_000)
        let result = FetchResult(
            finalStatus: 200, finalURL: "https://api.truid.test/cb?check_id=c1&code=SECRET1", finalBody: body,
            finalBodyTruncated: false, finalContentType: "application/json", json: json, stoppedAt: nil)
        let trace = FetchReport(
            interfaceName: "wwan0", localAddresses: ["100.64.23.5"], dnsServers: ["100.64.0.53"],
            hops: [hop], result: result, failure: nil, totalMs: 12)
        return CheckURLReport(trace: trace, callback: CheckCallback(recognizing: json))
    }

    @Test func theV02CallbackIsRecognised() {
        let code = JSONValue.parse(Array(#"{"check_id":"c1","code":"k","reference_id":"r1"}"#.utf8))
        #expect(CheckCallback(recognizing: code) == CheckCallback(checkID: "c1", code: "k", referenceID: "r1"))
        let error = JSONValue.parse(Array(#"{"check_id":"c1","error":"e","error_description":"d"}"#.utf8))
        #expect(CheckCallback(recognizing: error) == CheckCallback(checkID: "c1", error: "e", errorDescription: "d"))
    }

    /// Vonage's ending names the check by `request_id`, which serve over Vonage answers as `check_id`.
    @Test func vonagesEndingNamesTheCheckByItsRequestID() {
        let ending = JSONValue.parse(Array(#"{"request_id":"r1","code":"k"}"#.utf8))
        #expect(CheckCallback(recognizing: ending) == CheckCallback(checkID: "r1", code: "k"))
        let both = JSONValue.parse(Array(#"{"check_id":"c1","request_id":"r1","code":"k"}"#.utf8))
        #expect(CheckCallback(recognizing: both)?.checkID == "c1")
    }

    @Test(arguments: [
        #"{"check_id":"c1"}"#, #"{"code":"k"}"#, #"{"check_id":1,"code":"k"}"#, #"["check_id"]"#, "not json"
    ])
    func anythingElseIsNoCallback(body: String) {
        #expect(CheckCallback(recognizing: JSONValue.parse(Array(body.utf8))) == nil)
    }

    @Test func noResultMeansNoCallback() {
        #expect(CheckCallback(recognizing: nil) == nil)
    }

    @Test func redactionMasksTheCodeOnly() {
        let r = Self.sampleReport().redacted(.redacted)
        #expect(r.callback?.checkID == "c1" && r.callback?.referenceID == "r1")
        #expect(r.callback?.code == "[redacted]")
        #expect(r.trace.result?.json?["code"] == .string("[redacted]"))
        #expect(Self.sampleReport().redacted(.full) == Self.sampleReport())
    }

    @Test func humanLinesEndWithTheCallback() {
        let lines = Self.sampleReport().humanLines(.redacted)
        #expect(lines.count == 3)
        #expect(lines[2] == "[fetch] check_id=c1 code=[redacted] reference_id=r1")
        #expect(!lines.joined().contains("SECRET"))
        #expect(Self.sampleReport().humanLines(.full)[2] == "[fetch] check_id=c1 code=SECRET3 reference_id=r1")
    }

    /// A path on an interface that does not exist: nothing can be sent through it.
    static func nowhere(operatorID: String?) -> CellularPath {
        CellularPath(
            interfaceName: "cpnone0", ipv4Address: "192.0.2.99", dnsServers: ["192.0.2.53"], operatorID: operatorID)
    }

    @Test func anOperatorThatIsNotMCCMNCIsRefusedBeforeAnyPacket() async {
        // A CR/LF in the operator would inject a header: refused before any packet.
        let opener = CheckURLOpener(client: CellularHTTPClient(path: Self.nowhere(operatorID: "001-01\r\nX-Evil: 1")))
        let sent = await opener.open(FetchRequest(url: "http://api.truid.test/"), sendOperatorHeader: true)
        #expect(sent.trace.failure?.reason == .invalidHeader)
        #expect(
            sent.trace.failure?.message.hasPrefix("invalid operator '001-01\\u{d}\\u{a}X-Evil: 1'") == true,
            "\(String(describing: sent.trace.failure))")
        #expect(sent.trace.hops.isEmpty)
        // Not asked for: the header is not added, and the chain fails on the missing interface.
        let unsent = await opener.open(FetchRequest(url: "http://api.truid.test/"), sendOperatorHeader: false)
        #expect(unsent.trace.failure?.reason == .noSuchInterface)
        #expect(unsent.callback == nil)
    }

    @Test(arguments: [
        ("001-01", "00101"), ("00101", "00101"), ("234-15,234-030", "23415,234030"),
        ("310260", "310260")
    ])
    func operatorsAreSentAsTheSDKsSendThem(input: String, header: String) throws {
        #expect(try OperatorIDs(parsing: input).headerValue == header)
    }

    @Test(arguments: [
        "", "001", "001-1", "001-0001", "0010", "0010001", "00a-01", "001-01,", ",001-01", "001--01",
        "001-01\r\nX-Inj: 1", "001 01", "٠٠١-٠١", "001-01\u{0}"
    ])
    func operatorsThatAreNotMCCMNCAreDataErrors(input: String) {
        let error = #expect(throws: CellpathError.self) { try OperatorIDs(parsing: input) }
        #expect(error?.kind == .dataError)
        #expect(error?.message.contains("\r") == false && error?.message.contains("\n") == false)
    }
}
