import CellpathCore
import CellularHTTP
import FoundationEssentials
import Glibc
import SimulatedServices
import SimulatorScenario
import Testing

@testable import Workflow

/// Which failures `TruAPIClient` retries, how long it waits, and what each becomes.
struct TruAPIRetryTests {
    private static func onChecks(
        _ answer: Result<HTTPClientResponse, FetchFailure>
    ) -> @Sendable (HTTPClientRequest) -> Result<HTTPClientResponse, FetchFailure>? {
        { $0.url.hasSuffix("/checks") ? answer : nil }
    }

    private func checkCalls(_ transport: FakeAPITransport) -> Int {
        transport.requests.filter { $0.url.hasSuffix("/checks") }.count
    }

    @Test func a503IsRetriedWithGrowingJitteredBackoff() async throws {
        let transport = FakeAPITransport()
        for _ in 0 ..< 2 {
            transport.script(Self.onChecks(.success(FakeAPITransport.answer(503, #"{"title":"Unavailable"}"#))))
        }
        let pauses = Recorder<Duration>()
        let result = try await fakeClient(transport, pauses: pauses).simCheck(phoneNumber: OneSubscriber.msisdn)
        #expect(result.status == .completed && checkCalls(transport) == 3)
        #expect(pauses.values.count == 2)
        #expect(pauses.values[0] >= .milliseconds(100) && pauses.values[0] <= .milliseconds(300))
        #expect(pauses.values[1] >= .milliseconds(200) && pauses.values[1] <= .milliseconds(600))
    }

    @Test func attemptsAreBoundedAndTheLastAnswerIsKept() async {
        let transport = FakeAPITransport()
        for _ in 0 ..< 5 {
            transport.script(
                Self.onChecks(.success(FakeAPITransport.answer(502, #"{"title":"Bad Gateway","detail":"upstream"}"#))))
        }
        let error = await #expect(throws: TruAPIError.self) {
            _ = try await fakeClient(transport).simCheck(phoneNumber: OneSubscriber.msisdn)
        }
        guard case .upstream(let answer)? = error else {
            Issue.record("not upstream: \(String(describing: error))"); return
        }
        #expect(answer.status == 502 && answer.problem?.title == "Bad Gateway" && answer.problem?.detail == "upstream")
        #expect(answer.header("content-type") == "application/problem+json")
        #expect(error?.cellpathError.kind == .temporary)
        #expect(checkCalls(transport) == 3)
    }

    @Test func a429WaitsWhatRetryAfterSays() async throws {
        let transport = FakeAPITransport()
        transport.script(
            Self.onChecks(
                .success(
                    FakeAPITransport.answer(
                        429, #"{"title":"Too Many Requests"}"#,
                        headers: [HTTPHeader("Retry-After", "2")]))))
        let pauses = Recorder<Duration>()
        _ = try await fakeClient(transport, pauses: pauses).simCheck(phoneNumber: OneSubscriber.msisdn)
        #expect(pauses.values == [.seconds(2)])
    }

    @Test func a429AskingForMoreThanTheCapIsPassedOnWithItsHeaders() async {
        let transport = FakeAPITransport()
        transport.script(
            Self.onChecks(
                .success(
                    FakeAPITransport.answer(
                        429, #"{"title":"Too Many Requests"}"#,
                        headers: [
                            HTTPHeader("Retry-After", "60"), HTTPHeader("X-RateLimit-Limit", "1000"),
                            HTTPHeader("X-RateLimit-Remaining", "0"),
                            HTTPHeader("Set-Cookie", "a=b")
                        ]))))
        let pauses = Recorder<Duration>()
        let error = await #expect(throws: TruAPIError.self) {
            _ = try await fakeClient(transport, pauses: pauses).simCheck(phoneNumber: OneSubscriber.msisdn)
        }
        guard case .upstream(let answer)? = error else { Issue.record("not upstream"); return }
        #expect(answer.retryAfter == .seconds(60) && pauses.values.isEmpty)
        #expect(
            Set(answer.headers.map(\.name)) == [
                "Content-Type", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining"
            ])
        #expect(error?.cellpathError.kind == .temporary && error?.cellpathError.hint?.contains("60 s") == true)
    }

    @Test func theFakeAPIsRateLimitFaultIsTemporary() async {
        var configuration = FakeTruAPIConfiguration(
            clientID: FakeAPITransport.clientID, clientSecret: FakeAPITransport.clientSecret)
        configuration.faults.rateLimitRetryAfter = 30
        let transport = FakeAPITransport(configuration: configuration)
        let error = await #expect(throws: TruAPIError.self) {
            _ = try await fakeClient(transport).createCheck(
                .subscriberCheck, version: .v0_2, phoneNumber: OneSubscriber.msisdn)
        }
        guard case .upstream(let answer)? = error else { Issue.record("not upstream"); return }
        #expect(answer.status == 429 && answer.retryAfter == .seconds(30))
        #expect(error?.cellpathError.kind == .temporary)
    }

    @Test func clientErrorsAreNeverRetried() async {
        let transport = FakeAPITransport()
        let pauses = Recorder<Duration>()
        let client = fakeClient(transport, pauses: pauses)
        let error = await #expect(throws: TruAPIError.self) {
            _ = try await client.checkResult(.phoneCheck, version: .v0_2, checkID: "nope")
        }
        guard case .upstream(let answer)? = error else { Issue.record("not upstream"); return }
        #expect(answer.status == 404 && answer.problem != nil)
        #expect(error?.cellpathError.kind == .dataError)
        #expect(pauses.values.isEmpty && transport.requests.count == 2)
    }

    @Test func timeoutsAndResetsAreRetriedButARefusedConnectionIsUnavailable() async throws {
        let transport = FakeAPITransport()
        transport.script(Self.onChecks(.failure(FetchFailure(.hopTimeout, "timed out"))))
        transport.script(Self.onChecks(.failure(FetchFailure(.transportError, "connection reset by peer"))))
        let result = try await fakeClient(transport).simCheck(phoneNumber: OneSubscriber.msisdn)
        #expect(result.status == .completed && checkCalls(transport) == 3)

        let refused = FakeAPITransport()
        refused.script { _ in .failure(FetchFailure(.connectFailed, "connection refused")) }
        let error = await #expect(throws: TruAPIError.self) {
            _ = try await fakeClient(refused).accessToken(scopes: ["coverage"])
        }
        #expect(error?.cellpathError.kind == .unavailable)
        #expect(refused.requests.count == 1)
    }

    @Test func aMalformedAnswerIsAProtocolError() async {
        var configuration = FakeTruAPIConfiguration(
            clientID: FakeAPITransport.clientID, clientSecret: FakeAPITransport.clientSecret)
        configuration.faults.malformedJSON = true
        let transport = FakeAPITransport(configuration: configuration)
        let error = await #expect(throws: TruAPIError.self) {
            _ = try await fakeClient(transport).createCheck(
                .phoneCheck, version: .v0_1, phoneNumber: OneSubscriber.msisdn)
        }
        #expect(error?.cellpathError.kind == .protocolError)
    }

    @Test func theDefaultPolicyCapsItsDelays() {
        let policy = RetryPolicy(
            maxAttempts: 10, baseDelay: .seconds(1), maxDelay: .seconds(3), maxRetryAfter: .seconds(5))
        let transient = TruAPIError.transport(FetchFailure(.transportError, "reset"))
        #expect((1 ..< 10).allSatisfy { policy.delay(after: transient, attempt: $0)! <= .seconds(3) })
        #expect(policy.delay(after: transient, attempt: 10) == nil)
        #expect(RetryPolicy.never.delay(after: transient, attempt: 1) == nil)
    }
}

// MARK: Files

func readText(_ path: String) throws -> String {
    guard let file = fopen(path, "r") else { throw CellpathError(.noInput, path) }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count == 0 { break }
        bytes += buffer[0 ..< count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

func writeText(_ path: String, _ text: String, mode: mode_t) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
    guard fd >= 0 else { throw CellpathError(.cannotCreate, path) }
    _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    fchmod(fd, mode)
    close(fd)
}

func fileMode(_ path: String) -> mode_t {
    var info = stat()
    return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
}
