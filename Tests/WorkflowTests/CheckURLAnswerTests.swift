import CellpathCore
import CellularHTTP
import Testing
import Workflow

/// How a completed chain's final answer becomes the outcome a script sees: each status named,
/// its problem+json kept, the callback found in a redirect_url. No network, no root.
struct CheckURLAnswerTests {
    /// A one-hop chain that ended with `status`, `body` (`contentType`) and `headers`; stopped at
    /// `stoppedAt` when given.
    static func report(
        status: Int, body: String = "", contentType: String? = "application/json",
        headers: [HTTPHeader] = [], stoppedAt: String? = nil
    ) -> CheckURLReport {
        let json = JSONValue.parse(Array(body.utf8))
        let hop = HopTrace(
            index: 1, method: "GET", url: "https://api.truid.test/checks/c1/redirect", status: status,
            location: stoppedAt,
            remoteAddress: "203.0.113.10", remotePort: 443, localAddress: "100.64.23.5", localPort: 40000,
            connectionReused: false, tlsVersion: "TLSv1.3", httpVersion: "HTTP/1.1",
            timings: HopTimings(dnsMs: 1, connectMs: 2, tlsMs: 3, firstByteMs: 4, totalMs: 12), dnsAnswers: nil,
            responseHeaders: headers, requestHeaders: [], bodyBytes: body.utf8.count, headerBytes: 100,
            downgrade: false, startedAt: 1_700_000_000)
        let result = FetchResult(
            finalStatus: status, finalURL: hop.url, finalBody: body, finalBodyTruncated: false,
            finalContentType: contentType, json: json, stoppedAt: stoppedAt)
        let trace = FetchReport(
            interfaceName: "wwan0", localAddresses: [], dnsServers: [], hops: [hop], result: result, failure: nil,
            totalMs: 12)
        return CheckURLReport(trace: trace, callback: CheckURLReport.callback(of: trace))
    }

    static func problem(_ key: String, _ title: String, _ detail: String) -> String {
        #"{"type":"https://developer.tru.id/docs/reference/api-errors#\#(key)","title":"\#(title)","detail":"\#(detail)"}"#
    }

    @Test(arguments: [
        (400, "mno_not_supported", "mnoNotSupported", FailureKind.unavailable),
        (400, "bad_request", "badRequest", .dataError),
        (404, "check_not_found", "checkNotFound", .dataError),
        (409, "check_processed", "checkAlreadyProcessed", .dataError),
        (410, "check_expired", "checkExpired", .dataError),
        (412, "not_mobile_ip", "notMobileIP", .unavailable),
        (429, "too_many_requests", "rateLimited", .temporary),
        (501, "mno_redirect_unsupported", "mnoRedirectUnsupported", .unavailable),
        (503, "unavailable", "serverError", .temporary),
        (418, "teapot", "httpError", .dataError)
    ])
    func everyStatusIsNamedWithItsProblem(status: Int, key: String, reason: String, kind: FailureKind) throws {
        for contentType in ["application/problem+json", "application/json", "application/hal+json"] {
            let report = Self.report(
                status: status, body: Self.problem(key, "Title \(status)", "Detail \(key)"), contentType: contentType)
            let failure = try #require(report.failure, "\(status) is not a failure")
            #expect(failure.reason == reason && failure.kind == kind && failure.status == status && failure.hop == 1)
            #expect(failure.problem?.key == key && failure.problem?.title == "Title \(status)")
            #expect(failure.message.contains("Title \(status): Detail \(key)"), "\(failure.message)")
            #expect(
                report.humanLines(.redacted).last
                    == "[fetch] \(status) Title \(status): Detail \(key) (https://developer.tru.id/docs/reference/api-errors#\(key))"
            )
        }
    }

    @Test func notMobileIPSaysTheRequestDidNotComeFromTheMobileNetwork() throws {
        let failure = try #require(
            Self.report(status: 412, body: Self.problem("not_mobile_ip", "Precondition Failed", "Not a mobile IP"))
                .failure)
        #expect(failure.message.contains("did not come from a mobile network"))
        #expect(failure.hint?.contains("--interface") == true)
    }

    @Test func retryAfterIsInTheHint() throws {
        let failure = try #require(Self.report(status: 429, headers: [HTTPHeader("Retry-After", "30")]).failure)
        #expect(failure.retryAfter == "30" && failure.hint == "retry after 30 (the server's Retry-After)")
        #expect(Self.report(status: 429).failure?.hint == "retry later")
    }

    @Test func aBodyThatIsNoProblemStillNamesTheStatus() throws {
        let failure = try #require(
            Self.report(status: 404, body: "<html>not here</html>", contentType: "text/html").failure)
        #expect(failure.reason == "checkNotFound" && failure.problem == nil)
    }

    @Test func successesAreNoFailure() {
        #expect(Self.report(status: 200, body: #"{"check_id":"c1","code":"k"}"#).failure == nil)
        #expect(Self.report(status: 204).failure == nil)
    }

    @Test func aCallbackWithAnErrorIsTheCheckFailing() throws {
        let report = Self.report(
            status: 200, body: #"{"check_id":"c1","error":"mno_response_error","error_description":"no answer"}"#)
        let failure = try #require(report.failure)
        #expect(failure.reason == "checkFailed" && failure.kind == .unavailable)
        #expect(failure.message == "the check failed at the operator: mno_response_error (no answer)")
    }

    @Test func theRedirectURLCarriesTheCallback() throws {
        let report = Self.report(
            status: 302, stoppedAt: "https://app.test/done?check_id=c%2D1&code=k0de&reference_id=r1#x")
        #expect(report.callback == CheckCallback(checkID: "c-1", code: "k0de", referenceID: "r1"))
        #expect(report.failure == nil)
        #expect(report.humanLines(.redacted).last == "[fetch] check_id=c-1 code=[redacted] reference_id=r1")
        let error = Self.report(
            status: 302, stoppedAt: "https://app.test/done?check_id=c1&error=mno_response_error&error_description=a+b")
        #expect(error.callback == CheckCallback(checkID: "c1", error: "mno_response_error", errorDescription: "a b"))
        #expect(error.failure?.reason == "checkFailed")
    }

    @Test(arguments: [
        "https://app.test/done", "https://app.test/done?check_id=c1", "https://app.test/done?code=k",
        "https://app.test/done?check_id=&code=k"
    ])
    func aRedirectWithoutTheResultIsNoCallback(url: String) {
        #expect(CheckCallback(redirectURL: url) == nil)
    }
}
