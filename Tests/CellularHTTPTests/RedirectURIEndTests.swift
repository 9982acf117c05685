import Testing

@testable import CellularHTTP

/// The OIDC chain end (`RedirectURIEnd`): which redirect targets are the client's
/// `redirect_uri`, and that a chain stops there without requesting it. No network, no root.
struct RedirectURIEndTests {
    static let end = try! RedirectURIEnd("https://app.example.test/oidc/callback")

    @Test(arguments: [
        "https://app.example.test/oidc/callback?code=c&state=s",
        "https://app.example.test/oidc/callback",
        "HTTPS://APP.Example.TEST/oidc/callback?error=access_denied",
        "https://app.example.test:443/oidc/callback?code=c",
        "https://app.example.test/oidc/./x/../callback?code=c",
        "https://app.example.test/oidc/callback#fragment"
    ])
    func theRedirectURIMatchesWhateverItsQuery(_ target: String) {
        #expect(Self.end.matches(target))
    }

    @Test(arguments: [
        "https://app.example.test.evil.test/oidc/callback?code=c",
        "https://evil-app.example.test/oidc/callback",
        "https://app.example.test/oidc/callback2?code=c",
        "https://app.example.test/oidc/callback/more?code=c",
        "https://app.example.test/oidc/Callback?code=c",
        "https://app.example.test/oidc?code=c",
        "http://app.example.test/oidc/callback?code=c",
        "https://app.example.test:8443/oidc/callback?code=c",
        "not a url"
    ])
    func aLookAlikeIsNotTheRedirectURI(_ target: String) {
        #expect(!Self.end.matches(target))
    }

    @Test func aWrittenDefaultPortMatchesAnOmittedOne() throws {
        let end = try RedirectURIEnd("http://app.test:80/cb")
        #expect(end.matches("http://app.test/cb?code=c"))
        #expect(!end.matches("http://app.test:8080/cb?code=c"))
    }

    @Test(arguments: ["app.test/cb", "myapp://cb", "ftp://app.test/cb", ""])
    func aRedirectURIMustBeAnAbsoluteHTTPURL(_ uri: String) {
        #expect(throws: FetchFailure.self) { try RedirectURIEnd(uri) }
    }

    @Test func theChainStopsAtARelativeRedirectToTheURIWithoutRequestingIt() throws {
        var request = FetchRequest(url: "https://app.example.test/start")
        request.stop(at: try RedirectURIEnd("https://app.example.test/oidc/callback"))
        var policy = RedirectPolicy(
            url: try CurlURL.parse(request.url).get(), method: "GET", body: nil, headers: [], maxHops: 10,
            stopAtPrefix: nil, stopAt: request.stopAtRedirect, strict: false, resolve: CurlURL.resolve)
        #expect(try policy.nextRequest().index == 1)
        #expect(
            policy.decide(status: 302, location: "/oidc/callback?code=k&state=s", cookieJar: [])
                == .stop(
                    location: "https://app.example.test/oidc/callback?code=k&state=s",
                    stoppedAt: "https://app.example.test/oidc/callback?code=k&state=s"))
        #expect(throws: FetchFailure.self) { try policy.nextRequest() }
    }

    @Test func aPathPrefixOfTheURIIsFollowed() throws {
        var policy = RedirectPolicy(
            url: try CurlURL.parse("https://op.test/authorize").get(), method: "GET", body: nil, headers: [],
            maxHops: 10, stopAtPrefix: nil, stopAt: Self.end.matches, strict: false, resolve: CurlURL.resolve)
        _ = try policy.nextRequest()
        #expect(
            policy.decide(status: 302, location: "https://app.example.test/oidc/callbackX?code=k", cookieJar: [])
                == .follow(location: "https://app.example.test/oidc/callbackX?code=k"))
    }
}

/// What an OIDC device leg's trace shows of its authorize URL and its end: the subscriber's
/// number and the code masked; `state`, `nonce` and the PKCE challenge (public by design) shown.
struct OIDCRedactionTests {
    @Test func theAuthorizeURLsNumberAndTheCodeAreMaskedUnlessAskedFor() {
        let url =
            "https://op.test/authorize?response_type=code&client_id=c&state=s3&code_challenge=ch4"
            + "&login_hint=tel%3A%2B447940448591&scope=openid"
        let masked = redactedURL(url)
        #expect(!masked.contains("447940448591") && masked.contains("login_hint=[redacted]"), "\(masked)")
        #expect(masked.contains("state=s3") && masked.contains("code_challenge=ch4"))
        #expect(redactedURL(url, .full) == url)
        let end = redactedURL("https://app.test/cb?code=k1&state=s3")
        #expect(!end.contains("k1") && end.contains("state=s3"))
        #expect(Credentials.isCredential("code_verifier"))
    }
}
