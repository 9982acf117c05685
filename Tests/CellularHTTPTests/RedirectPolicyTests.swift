import Testing

@testable import CellularHTTP

/// The redirect rules alone: no network, no root. Locations are resolved with curl's URL API
/// (`CurlURL.resolve`, pure computation) unless a test injects its own resolver.
struct RedirectPolicyTests {
    /// One response to the request the policy sent last.
    struct Response {
        var status: Int
        var location: String?
        var cookies: [String] = []

        static func redirect(_ status: Int = 302, to location: String, cookies: [String] = []) -> Response {
            Response(status: status, location: location, cookies: cookies)
        }
        static let ok = Response(status: 200, location: nil)
    }

    /// What a chain did under the policy: the requests sent and how it ended.
    struct Walk {
        var requests: [ChainRequest] = []
        /// The last decision; nil when `nextRequest()` refused the next request.
        var last: RedirectDecision?
        /// What `nextRequest()` threw.
        var refused: FetchFailure?
    }

    static func parse(_ text: String) throws -> ParsedURL {
        try CurlURL.parse(text).get()
    }

    static func policy(
        _ first: String, method: String = "GET", body: [UInt8]? = nil, headers: [HTTPHeader] = [],
        maxHops: Int = 10, stopAt: String? = nil, strict: Bool = false,
        resolve: @escaping RedirectPolicy.Resolve = CurlURL.resolve
    ) throws -> RedirectPolicy {
        RedirectPolicy(
            url: try parse(first), method: method, body: body, headers: headers, maxHops: maxHops,
            stopAtPrefix: stopAt, strict: strict, resolve: resolve)
    }

    /// Drives `policy` as the chain runner does, answering request n with `responses[n - 1]`.
    static func walk(_ policy: RedirectPolicy, _ responses: [Response]) throws -> Walk {
        var policy = policy
        var walk = Walk()
        for response in responses {
            do throws(FetchFailure) {
                walk.requests.append(try policy.nextRequest())
            } catch {
                walk.refused = error
                walk.last = nil
                return walk
            }
            walk.last = policy.decide(status: response.status, location: response.location, cookieJar: response.cookies)
            guard case .follow = walk.last else { return walk }
        }
        Issue.record("the chain asked for more than \(responses.count) responses")
        return walk
    }

    /// The failure of a `.refuse` decision.
    static func refusal(_ decision: RedirectDecision?) -> FetchFailure? {
        if case .refuse(let failure, _) = decision { failure } else { nil }
    }

    // MARK: methods and bodies

    @Test(arguments: [
        (301, "POST", "GET", false), (302, "POST", "GET", false), (303, "POST", "GET", false),
        (307, "POST", "POST", true), (308, "POST", "POST", true),
        (301, "PUT", "PUT", true), (302, "PUT", "PUT", true), (303, "PUT", "GET", false),
        (307, "PUT", "PUT", true), (303, "HEAD", "HEAD", false), (302, "DELETE", "DELETE", true)
    ])
    func methodRules(status: Int, method: String, nextMethod: String, keepsBody: Bool) throws {
        let body = Array("a=1".utf8)
        let chain = try Self.walk(
            try Self.policy("http://h/start", method: method, body: body),
            [.redirect(status, to: "/next"), .ok])
        try #require(chain.requests.count == 2)
        #expect(chain.requests[1].method == nextMethod)
        #expect(chain.requests[1].body == (keepsBody ? body : nil))
        #expect(chain.last == .final)
    }

    @Test func contentTypeGoesWithTheBody() throws {
        let headers = [HTTPHeader("Content-Type", "application/x-www-form-urlencoded"), HTTPHeader("X-Trace", "1")]
        let dropped = try Self.walk(
            try Self.policy("http://h/a", method: "POST", body: [1], headers: headers),
            [.redirect(302, to: "/b"), .ok])
        #expect(dropped.requests.last?.headers == [HTTPHeader("X-Trace", "1")])
        let kept = try Self.walk(
            try Self.policy("http://h/a", method: "POST", body: [1], headers: headers),
            [.redirect(307, to: "/b"), .ok])
        #expect(kept.requests.last?.headers == headers)
    }

    @Test(arguments: [200, 204, 300, 304, 305, 306, 404, 500])
    func otherStatusesEndTheChainEvenWithALocation(status: Int) throws {
        let chain = try Self.walk(try Self.policy("http://h/a"), [Response(status: status, location: "/b")])
        #expect(chain.requests.count == 1 && chain.last == .final)
    }

    @Test func aRedirectWithoutLocationEndsTheChain() throws {
        let chain = try Self.walk(try Self.policy("http://h/a"), [Response(status: 302, location: nil)])
        #expect(chain.last == .final)
    }

    // MARK: Location

    @Test(arguments: [
        ("http://h/dir/rel", "step2?x=1&y=a%20b", "http://h/dir/step2?x=1&y=a%20b"),
        ("http://h/dir/rel?old=1", "?q=1", "http://h/dir/rel?q=1"),
        ("http://h/dir/rel", "/abs", "http://h/abs"),
        ("http://h/dir/sub/rel", "../up", "http://h/dir/up"),
        ("https://h/a", "//other.test/b", "https://other.test/b"),
        ("http://mno.test/empty-path", "http://other.test:8080?from=empty", "http://other.test:8080/?from=empty"),
        ("http://h/a", "https://app.test/cb?code=1#frag", "https://app.test/cb?code=1#frag")
    ])
    func relativeLocationsResolveAgainstTheCurrentURL(base: String, location: String, resolved: String) throws {
        let chain = try Self.walk(try Self.policy(base), [.redirect(to: location), .ok])
        #expect(chain.requests.last?.url.text == resolved)
    }

    @Test func theFollowedLocationIsReportedResolved() throws {
        var policy = try Self.policy("http://h/dir/rel")
        _ = try policy.nextRequest()
        #expect(policy.decide(status: 302, location: "step2", cookieJar: []) == .follow(location: "http://h/dir/step2"))
        #expect(policy.nextIndex == 2)
    }

    @Test func aMalformedLocationIsRefusedWithoutATarget() throws {
        let chain = try Self.walk(try Self.policy("http://h/a"), [.redirect(to: "http://exa mple.test/")])
        #expect(Self.refusal(chain.last)?.reason == .malformedURL && Self.refusal(chain.last)?.hop == 1)
        #expect(chain.last == .refuse(try #require(Self.refusal(chain.last)), location: nil))
    }

    @Test func theInjectedResolverDecidesTheTarget() throws {
        let target = try Self.parse("http://elsewhere.test/x")
        let chain = try Self.walk(
            try Self.policy("http://h/a", resolve: { _, _ in .success(target) }),
            [.redirect(to: "anything"), .ok])
        #expect(chain.requests.last?.url == target)
        let failing = try Self.walk(
            try Self.policy("http://h/a", resolve: { _, _ in .failure(FetchFailure(.malformedURL, "no")) }),
            [.redirect(to: "anything")])
        #expect(failing.last == .refuse(FetchFailure(.malformedURL, "no", hop: 1), location: nil))
    }

    @Test func aNonHTTPTargetIsRefusedWithItsLocation() throws {
        let chain = try Self.walk(try Self.policy("http://h/a"), [.redirect(to: "ftp://h/file")])
        guard case .refuse(let failure, let location) = chain.last else {
            Issue.record("not refused: \(String(describing: chain.last))")
            return
        }
        #expect(failure.reason == .nonHTTPScheme && failure.hop == 1)
        #expect(failure.message == "a redirect uses the ftp: scheme; only http and https are allowed")
        #expect(location == "ftp://h/file")
    }

    // MARK: hop limit

    @Test(arguments: [1, 2, 10])
    func aChainEndingAtRequestMaxHopsSucceeds(maxHops: Int) throws {
        let responses = Array(repeating: Response.redirect(to: "/next"), count: maxHops - 1) + [.ok]
        let chain = try Self.walk(
            try Self.policy("http://h/start", maxHops: maxHops, resolve: Self.numbered), responses)
        #expect(chain.requests.map(\.index) == Array(1 ... maxHops))
        #expect(chain.last == .final)
    }

    @Test(arguments: [1, 2, 10])
    func aChainNeedingOneMoreRequestFailsAfterMaxHops(maxHops: Int) throws {
        let responses = Array(repeating: Response.redirect(to: "/next"), count: maxHops)
        let chain = try Self.walk(
            try Self.policy("http://h/start", maxHops: maxHops, resolve: Self.numbered), responses)
        #expect(chain.requests.count == maxHops)
        guard case .refuse(let failure, let location) = chain.last else {
            Issue.record("not refused: \(String(describing: chain.last))")
            return
        }
        #expect(failure.reason == .tooManyHops && failure.hop == maxHops)
        #expect(failure.message == "the chain needs more than \(maxHops) requests")
        #expect(location == "http://h/\(maxHops + 1)")
    }

    /// Resolves any Location to `http://h/<n>`, n the request it will be: a chain without loops.
    static func numbered(_ location: String, _ base: ParsedURL) -> Result<ParsedURL, FetchFailure> {
        let n = (Int(base.text.split(separator: "/").last ?? "") ?? 1) + 1
        return CurlURL.parse("http://h/\(n)")
    }

    // MARK: loops

    @Test func aRedirectToItselfIsALoopAtTheSecondRequest() throws {
        let chain = try Self.walk(try Self.policy("http://h/loop"), [.redirect(to: "/loop"), .redirect(to: "/loop")])
        #expect(chain.requests.count == 2)
        guard case .refuse(let failure, _) = chain.last else {
            Issue.record("not refused: \(String(describing: chain.last))")
            return
        }
        #expect(failure.reason == .redirectLoop && failure.hop == 2)
        #expect(
            failure.message == "redirect loop: http://h/loop was requested twice with the same method, body and cookies"
        )
    }

    @Test func aTwoStepCycleIsALoopAtTheThirdRequest() throws {
        let chain = try Self.walk(
            try Self.policy("http://h/a"), [.redirect(to: "/b"), .redirect(to: "/a"), .redirect(to: "/b")])
        #expect(chain.requests.map(\.url.text) == ["http://h/a", "http://h/b", "http://h/a"])
        #expect(Self.refusal(chain.last)?.reason == .redirectLoop && Self.refusal(chain.last)?.hop == 3)
    }

    @Test func aSelfRedirectThatChangesTheCookieJarIsNoLoop() throws {
        let visit = { (n: Int) in ["h\tFALSE\t/\tFALSE\t0\tvisited\t\(n)"] }
        let changing = try Self.walk(
            try Self.policy("http://h/self"),
            [
                .redirect(to: "/self", cookies: visit(1)), .redirect(to: "/self", cookies: visit(2)), .ok
            ])
        #expect(changing.requests.count == 3 && changing.last == .final)
        // The same request leaving the same jar behind is a loop.
        let repeating = try Self.walk(
            try Self.policy("http://h/self"),
            [
                .redirect(to: "/self", cookies: visit(1)), .redirect(to: "/self", cookies: visit(1))
            ])
        #expect(Self.refusal(repeating.last)?.reason == .redirectLoop && Self.refusal(repeating.last)?.hop == 2)
    }

    @Test func theSameURLWithAnotherMethodAndBodyIsNoLoop() throws {
        // POST /a → 302 /a becomes GET /a without body: a new request; GET /a → 302 /a repeats it.
        let chain = try Self.walk(
            try Self.policy("http://h/a", method: "POST", body: [1]),
            [.redirect(to: "/a"), .redirect(to: "/a"), .redirect(to: "/a")])
        #expect(chain.requests.map(\.method) == ["POST", "GET", "GET"])
        #expect(Self.refusal(chain.last)?.reason == .redirectLoop && Self.refusal(chain.last)?.hop == 3)
    }

    // MARK: downgrades

    @Test func thePlainHTTPCarrierLegToANewHostIsNoDowngrade() throws {
        // The carrier's header-enrichment leg: https at the API, plain http to the operator.
        let chain = try Self.walk(
            try Self.policy("https://api.test/a", strict: true), [.redirect(to: "http://carrier.test/b"), .ok])
        #expect(chain.requests.map(\.isDowngrade) == [false, false])
        #expect(chain.last == .final)
    }

    @Test func plainHTTPBackToAHostReachedOverHTTPSIsADowngrade() throws {
        let chain = try Self.walk(
            try Self.policy("https://api.test/a"),
            [
                .redirect(to: "http://carrier.test/b"), .redirect(to: "http://other.test/c"),
                .redirect(to: "http://api.test:8080/d"), .ok
            ])
        // carrier.test and other.test: never reached over https; api.test: was, on any port.
        #expect(chain.requests.map(\.isDowngrade) == [false, false, false, true])
    }

    @Test(arguments: [
        "http://carrier.test/cb?check_id=c&code=k", "http://carrier.test/cb?assertion=a", "http://app.test/cb#%63ode=k"
    ])
    func plainHTTPCarryingACredentialAfterHTTPSIsADowngrade(target: String) throws {
        let chain = try Self.walk(try Self.policy("https://api.test/a"), [.redirect(to: target), .ok])
        #expect(chain.requests.map(\.isDowngrade) == [false, true])
    }

    @Test func httpsAndPlainHTTPChainsAreNoDowngrade() throws {
        let secure = try Self.walk(try Self.policy("https://a.test/"), [.redirect(to: "https://b.test/"), .ok])
        let plain = try Self.walk(
            try Self.policy("http://a.test/?code=1"),
            [.redirect(to: "http://b.test/?code=2"), .redirect(to: "https://a.test/"), .ok])
        #expect(secure.requests.map(\.isDowngrade) == [false, false])
        #expect(plain.requests.map(\.isDowngrade) == [false, false, false])
    }

    @Test func strictRefusesTheDowngradeBeforeSendingIt() throws {
        let back = try Self.walk(
            try Self.policy("https://api.test/a", strict: true), [.redirect(to: "http://api.test/b"), .ok])
        #expect(back.requests.count == 1)
        #expect(
            back.refused
                == FetchFailure(
                    .downgradeRefused, "refused a downgrade to plain http: api.test was reached over https before",
                    hop: 2))
        let code = try Self.walk(
            try Self.policy("https://api.test/a", strict: true), [.redirect(to: "http://app.test/cb?code=k"), .ok])
        #expect(code.requests.count == 1 && code.refused?.reason == .downgradeRefused)
    }

    // MARK: stop-at

    @Test func theStopPrefixEndsTheChainWithQueryAndFragment() throws {
        let chain = try Self.walk(
            try Self.policy("http://h/stop", stopAt: "https://app.test/"),
            [.redirect(to: "https://app.test/cb?check_id=c&code=k#frag")])
        #expect(chain.requests.count == 1)
        #expect(
            chain.last
                == .stop(
                    location: "https://app.test/cb?check_id=c&code=k#frag",
                    stoppedAt: "https://app.test/cb?check_id=c&code=k#frag"))
    }

    @Test func theStopPrefixMatchesAnAppSchemeAndCostsNoHop() throws {
        // Checked before the scheme rule and the hop limit.
        let chain = try Self.walk(
            try Self.policy("http://h/stop", maxHops: 1, stopAt: "myapp://"), [.redirect(to: "myapp://cb?code=k")])
        #expect(chain.last == .stop(location: "myapp://cb/?code=k", stoppedAt: "myapp://cb/?code=k"))
    }

    /// Found with the `redirect` fuzz target (docs/fuzzing.md): curl keeps non-ASCII as it is, and a
    /// combining mark right after the prefix hid it from a Character-wise `hasPrefix`.
    @Test func theStopPrefixMatchesBeforeACombiningMark() throws {
        let chain = try Self.walk(
            try Self.policy("http://h/stop", stopAt: "https://app.test/"),
            [.redirect(to: "https://app.test/\u{301}cb?code=k")])
        #expect(chain.requests.count == 1)
        guard case .stop? = chain.last else {
            Issue.record("the chain did not stop: \(String(describing: chain.last))")
            return
        }
    }

    @Test func theStopPrefixAlsoMatchesTheLocationAsSent() throws {
        let chain = try Self.walk(try Self.policy("http://h/a", stopAt: "/done"), [.redirect(to: "/done?x=1")])
        #expect(chain.last == .stop(location: "http://h/done?x=1", stoppedAt: "/done?x=1"))
    }

    @Test func theStopRuleEndsTheChainAtTheTargetItAccepts() throws {
        let policy = RedirectPolicy(
            url: try Self.parse("http://h/a"), method: "GET", body: nil, headers: [], maxHops: 10,
            stopAtPrefix: nil, stopAt: { $0.contains("check_id=") }, strict: false, resolve: CurlURL.resolve)
        let chain = try Self.walk(
            policy, [.redirect(to: "http://carrier.test/id"), .redirect(to: "https://app.test/cb?check_id=c&code=k")])
        #expect(chain.requests.count == 2)
        #expect(
            chain.last
                == .stop(
                    location: "https://app.test/cb?check_id=c&code=k",
                    stoppedAt: "https://app.test/cb?check_id=c&code=k"))
    }

    // MARK: headers across origins

    @Test func credentialsStayWithTheFirstOrigin() throws {
        let headers = [
            HTTPHeader("Authorization", "Bearer t"), HTTPHeader("Proxy-Authorization", "Basic p"),
            HTTPHeader("Cookie", "a=1"), HTTPHeader("X-Trace", "1")
        ]
        let chain = try Self.walk(
            try Self.policy("http://mno.test/a", headers: headers),
            [
                .redirect(to: "/same-origin"), .redirect(to: "http://mno.test:8080/port"),
                .redirect(to: "http://mno.test/back"), .ok
            ])
        #expect(chain.requests.map(\.headers.count) == [4, 4, 1, 1])
        #expect(chain.requests.last?.headers == [HTTPHeader("X-Trace", "1")])
    }

    @Test func firstRequestHeadersGoWithTheFirstRequestOnly() throws {
        let policy = RedirectPolicy(
            url: try Self.parse("http://mno.test/a"), method: "GET", body: nil,
            headers: [HTTPHeader("X-Trace", "1")], firstRequestHeaders: [HTTPHeader("x-tru-ops", "00101")],
            maxHops: 10, stopAtPrefix: nil, strict: false, resolve: CurlURL.resolve)
        let chain = try Self.walk(policy, [.redirect(to: "/same-origin"), .redirect(to: "http://other.test/"), .ok])
        try #require(chain.requests.count == 3)
        #expect(chain.requests[0].headers == [HTTPHeader("X-Trace", "1"), HTTPHeader("x-tru-ops", "00101")])
        #expect(chain.requests[1].headers == [HTTPHeader("X-Trace", "1")])
        #expect(chain.requests[2].headers == [HTTPHeader("X-Trace", "1")])
    }
}
