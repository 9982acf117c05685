import CellpathCore
import Glibc
import TestSupport
import Testing

/// What `cellpath serve` answers when the tru.ID API fails: at start (exit codes) and while
/// serving (retries, pass-through, 502/504), against a stub API in a namespace of the test's own.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ServeUpstreamFaultTests {
    static let create = #"{"phone_number":"+447940448591"}"#

    @Test func wrongCredentialsAtStartExit78() throws {
        let serve = try StubbedServe()
        #expect(try serve.start(clientSecret: "wrong") == 78, "\(serve.logText)")
        #expect(serve.logText.contains("401"), "\(serve.logText)")
        #expect(!serve.logText.contains("wrong"), "the secret is in the log")
    }

    @Test func unreachableAPIAtStartExits69() throws {
        let serve = try StubbedServe()
        #expect(try serve.start(apiBase: "http://127.0.0.1:9") == 69, "\(serve.logText)")
    }

    @Test func serverErrorsAreRetriedThenPassedOn() throws {
        let serve = try StubbedServe()
        try serve.start()
        serve.api.mode = .failing(status: 503, count: 2)
        let recovered = try serve.post("/subscriber-check", json: Self.create)
        #expect(recovered.status == 200 && recovered.json?["check_id"]?.string == "c1")
        #expect(serve.api.checkCalls == 3, "two 503s, then the third attempt succeeds")

        serve.api.mode = .failing(status: 502, count: 100)
        let failed = try serve.post("/subscriber-check", json: Self.create)
        #expect(
            failed.status == 502 && failed.json?["title"]?.string == "Upstream failing", "the API's problem, passed on")
        #expect(failed.headers["content-type"] == "application/problem+json")
        #expect(serve.api.checkCalls == 6, "three attempts in all")
        #expect(serve.stop() == 0)
    }

    @Test func aLongRetryAfterIsPassedOnAtOnce() throws {
        let serve = try StubbedServe()
        try serve.start()
        serve.api.mode = .rateLimited(seconds: 30)
        let limited = try serve.post("/subscriber-check", json: Self.create)
        #expect(limited.status == 429 && limited.headers["retry-after"] == "30")
        #expect(serve.api.checkCalls == 1, "a Retry-After over 5 s is not waited for")
    }

    @Test func aSlowAPIEndsIn504() throws {
        let serve = try StubbedServe()
        try serve.start(["--upstream-timeout", "1"])
        serve.api.mode = .slow(milliseconds: 2500)
        let slow = try serve.post("/subscriber-check", json: Self.create)
        #expect(slow.status == 504 && slow.json?["error_message"]?.string == "the tru.ID API did not answer in time")
        serve.api.mode = .normal
        #expect(try serve.post("/subscriber-check", json: Self.create).status == 200, "serve recovers")
    }

    @Test func aMalformedAnswerEndsIn502() throws {
        let serve = try StubbedServe()
        try serve.start()
        serve.api.mode = .malformed
        let malformed = try serve.post("/subscriber-check", json: Self.create)
        #expect(malformed.status == 502 && malformed.headers["content-type"] == "application/json")
        #expect(malformed.json?["error_message"]?.string?.hasPrefix("the tru.ID API answered") == true)
    }

    @Test func anExpiredTokenIsFetchedAgainOnce() throws {
        let serve = try StubbedServe()
        try serve.start()
        #expect(try serve.post("/subscriber-check", json: Self.create).status == 200)
        let before = try #require(try serve.tokenRequests())
        serve.api.mode = .tokenExpiresOnce
        let created = try serve.post("/subscriber-check", json: Self.create)
        #expect(created.status == 200 && created.json?["check_id"]?.string == "c1")
        #expect(try serve.tokenRequests() == before + 1)
        #expect(try serve.post("/subscriber-check", json: Self.create).status == 200)
        #expect(try serve.tokenRequests() == before + 1, "the new token is kept")
    }
}
