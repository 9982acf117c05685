import CellpathCore
import Glibc
import SystemSupport
import TestSupport
import Testing

/// What a web page in the operator's browser can do with `cellpath serve` on 127.0.0.1: nothing
/// by default (no CORS, its origin refused, no form bodies, its rebound name refused, no token
/// route), while app clients, which send no `Origin`, are served as before.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ServeBrowserTests {
    static let create = #"{"phone_number":"+447940448591"}"#
    static let url = "http://127.0.0.1:8080"

    @Test func aWebPagesOriginIsRefusedAndGetsNoCORSHeaders() throws {
        let serve = try StubbedServe()
        try serve.start()
        let page = try serve.post("/sim-check", json: Self.create, ["-H", "Origin: https://attacker.example"])
        #expect(page.status == 403 && page.headers["access-control-allow-origin"] == nil, "\(page)")
        let preflight = try serve.curl([
            "-X", "OPTIONS", "-H", "Origin: https://attacker.example", "-H", "Access-Control-Request-Method: POST",
            "-H", "Access-Control-Request-Headers: content-type", "\(Self.url)/subscriber-check"
        ])
        #expect(preflight.status == 403 && preflight.headers["access-control-allow-origin"] == nil, "\(preflight)")
        let sandboxed = try serve.curl(["-H", "Origin: null", "\(Self.url)/healthz"])
        #expect(sandboxed.status == 403, "a sandboxed page's origin is null")
        #expect(serve.api.calledTargets.isEmpty, "a web page's request reached the API: \(serve.api.calledTargets)")
        #expect(
            try serve.post("/subscriber-check", json: Self.create).status == 200,
            "an app, which sends no Origin, is served")
    }

    @Test func originsGivenWithCORSOriginAreServedWithCORSHeaders() throws {
        let serve = try StubbedServe()
        try serve.start(["--cors-origin", "https://app.example"])
        let allowed = try serve.post("/subscriber-check", json: Self.create, ["-H", "Origin: https://app.example"])
        #expect(
            allowed.status == 200 && allowed.headers["access-control-allow-origin"] == "https://app.example",
            "\(allowed)")
        let preflight = try serve.curl([
            "-X", "OPTIONS", "-H", "Origin: https://app.example", "\(Self.url)/subscriber-check"
        ])
        #expect(preflight.status == 204 && preflight.headers["access-control-allow-origin"] == "https://app.example")
        #expect(
            try serve.post("/subscriber-check", json: Self.create, ["-H", "Origin: https://other.example"]).status
                == 403)
    }

    @Test func formBodiesAreReadOnlyWhenAllowed() throws {
        let serve = try StubbedServe()
        try serve.start()
        let form = try serve.curl(["-d", "phone_number=%2B447940448591", "\(Self.url)/sim-check"])
        #expect(
            form.status == 415
                && form.json?["error_message"]?.string
                    == "send application/json (form bodies: serve --allow-form-bodies)"
        )
        let text = try serve.curl([
            "-H", "Content-Type: text/plain; x=json", "-d", Self.create, "\(Self.url)/subscriber-check"
        ])
        #expect(text.status == 415, "text whose type mentions JSON is no JSON")
        #expect(serve.api.calledTargets.isEmpty)

        let compatible = try StubbedServe()
        try compatible.start(["--allow-form-bodies"])
        let allowed = try compatible.curl(["-d", "phone_number=%2B447940448591", "\(Self.url)/subscriber-check"])
        #expect(allowed.status == 200 && allowed.json?["check_id"]?.string == "c1")
    }

    /// DNS rebinding: a page whose name now resolves to 127.0.0.1 sends its own name as `Host`.
    @Test func onlyServesOwnHostNamesAreServed() throws {
        let serve = try StubbedServe()
        try serve.start(["--server-name", "serve.example"])
        let rebound = try serve.curl(["-H", "Host: attacker.example", "\(Self.url)/healthz"])
        #expect(rebound.status == 421 && rebound.json?["error_message"] != nil, "\(rebound)")
        let reboundPost = try serve.post("/subscriber-check", json: Self.create, ["-H", "Host: attacker.example:8080"])
        #expect(reboundPost.status == 421)
        #expect(serve.api.checkCalls == 0)
        #expect(
            try serve.curl(["-H", "Host: 127.0.0.2:8080", "\(Self.url)/healthz"]).status == 421,
            "another address than serve's")
        #expect(try serve.curl(["\(Self.url)/healthz"]).status == 200, "the listen address")
        #expect(
            try serve.curl(["-H", "Host: localhost:8080", "\(Self.url)/healthz"]).status == 200,
            "localhost, on a loopback address")
        #expect(try serve.curl(["-H", "Host: SERVE.example.", "\(Self.url)/healthz"]).status == 200, "a --server-name")
    }

    @Test func theCoverageTokenRouteIsOffUnlessTurnedOn() throws {
        let serve = try StubbedServe()
        try serve.start()
        let off = try serve.curl(["\(Self.url)/coverage-access-token"])
        #expect(off.status == 404 && off.json?["token"] == nil, "\(off)")
        #expect(off.json?["error_message"]?.string?.contains("--coverage-token-route") == true)

        let on = try StubbedServe()
        try on.start(["--coverage-token-route"])
        let token = try on.curl(["\(Self.url)/coverage-access-token"])
        #expect(token.status == 200 && token.json?["token"]?.string != nil)
    }

    /// `.` and `..` in a value that becomes a path segment upstream would be resolved by libcurl
    /// into another API route, called with serve's token.
    @Test func dotSegmentsNeverReachTheAPI() throws {
        let serve = try StubbedServe()
        try serve.start()
        for target in [
            "/subscriber-check/..", "/subscriber-check/.", "/check_status?check_id=..",
            "/v0.2/subscriber-check?check_id=.",
            "/device?ip_address=..", "/country?country_code=.", "/v0.2/phone-check/exchange-code?code=1&check_id=.."
        ] {
            let answer = try serve.curl(["--path-as-is", "\(Self.url)\(target)"])
            #expect(answer.status == 400, "\(target): \(answer)")
        }
        #expect(serve.api.calledTargets.isEmpty, "\(serve.api.calledTargets)")
    }

    @Test func servingWithoutAKeyBeyondLoopbackIsWarnedAbout() throws {
        let warning = "without --api-key-file: anyone who reaches it can run checks on your account"
        let open = try StubbedServe()
        try open.start(["--listen", "0.0.0.0:8080"])
        #expect(open.logText.contains("listening on 0.0.0.0 \(warning)"), "\(open.logText)")
        let loopback = try StubbedServe()
        try loopback.start(["--listen", "127.0.0.2:8080"])
        #expect(!loopback.logText.contains(warning), "\(loopback.logText)")
    }

    @Test func aKeyFileOthersCanReadIsWarnedAbout() throws {
        let directory = try TemporaryDirectory.make("cptest-serve-keyfile")
        defer { FileSystem.removeTree(directory) }
        let keyFile = "\(directory)/key"
        let fd = open(keyFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = Array("0123456789abcdef-key\n".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        fchmod(fd, 0o644)
        close(fd)
        let exposed = try StubbedServe()
        try exposed.start(["--api-key-file", keyFile])
        #expect(
            exposed.logText.contains(
                "\(keyFile) holds the client key but is accessible by its group or others (mode 0644)"),
            "\(exposed.logText)")
        chmod(keyFile, 0o600)
        let kept = try StubbedServe()
        try kept.start(["--api-key-file", keyFile])
        #expect(!kept.logText.contains("accessible by its group or others"), "\(kept.logText)")
    }
}
