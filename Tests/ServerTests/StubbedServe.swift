import CShims
import CellpathCore
import FoundationEssentials
import Glibc
import HTTPServer
import Synchronization
import TestSupport
import Testing

/// A stand-in for the tru.ID API whose answers a test steers: tokens for `id:secret`, and
/// SubscriberCheck creation answered as `mode` says. Counts what it was asked. Any thread.
final class StubAPI: Sendable {
    enum Mode: Sendable {
        case normal
        /// The next `count` calls answer `status`, then normal.
        case failing(status: Int, count: Int)
        /// Every answer comes `milliseconds` late.
        case slow(milliseconds: Int)
        /// 429 with `Retry-After: seconds`.
        case rateLimited(seconds: Int)
        /// 201 with a truncated JSON body.
        case malformed
        /// The token in use is refused with 401 once, as an expired one is.
        case tokenExpiresOnce
    }

    private struct State {
        var mode = Mode.normal
        var tokens = 0
        var checkCalls = 0
        var validToken = ""
        var paths: [String] = []
    }
    private let state = Mutex(State())

    var mode: Mode {
        get { state.withLock { $0.mode } }
        set { state.withLock { $0.mode = newValue } }
    }
    var tokenRequests: Int { state.withLock { $0.tokens } }
    var checkCalls: Int { state.withLock { $0.checkCalls } }
    /// The targets of every request but token requests, in order.
    var calledTargets: [String] { state.withLock { $0.paths } }

    /// Answers one request; runs on the connection's thread.
    func answer(_ request: HTTPRequest) -> HTTPResponse {
        if case .slow(let milliseconds) = mode { usleep(UInt32(milliseconds) * 1000) }
        if request.path == "/oauth2/v1/token" {
            guard request.headers["Authorization"] == "Basic " + Data("id:secret".utf8).base64EncodedString() else {
                return Self.problem(401, "unauthorized", "Invalid client credentials")
            }
            let token = state.withLock { state -> String in
                state.tokens += 1
                state.validToken = "token-\(state.tokens)"
                return state.validToken
            }
            return HTTPResponse(
                status: 200, contentType: "application/json",
                body: #"{"access_token":"\#(token)","token_type":"bearer","expires_in":3600,"scope":"coverage"}"#)
        }
        state.withLock { $0.paths.append(request.target) }
        guard request.method == "POST", request.path == "/subscriber_check/v0.1/checks" else {
            return Self.problem(404, "not_found", "Not Found")
        }
        let (mode, authorized) = state.withLock { state -> (Mode, Bool) in
            state.checkCalls += 1
            let mode = state.mode
            if case .failing(let status, let count) = mode {
                state.mode = count > 1 ? .failing(status: status, count: count - 1) : .normal
            }
            if case .tokenExpiresOnce = mode { state.validToken = "expired"; state.mode = .normal }
            return (mode, request.headers["Authorization"] == "Bearer \(state.validToken)")
        }
        switch mode {
        case .failing(let status, _): return Self.problem(status, "internal_error", "Upstream failing")
        case .rateLimited(let seconds):
            var response = Self.problem(429, "too_many_requests", "Too Many Requests")
            response.headers.set("Retry-After", String(seconds))
            return response
        case .malformed:
            return HTTPResponse(
                status: 201, contentType: "application/hal+json", body: #"{"check_id":"c1","_links":{"chec"#)
        default: break
        }
        guard authorized else { return Self.problem(401, "unauthorized", "Access token expired") }
        return HTTPResponse(
            status: 201, contentType: "application/hal+json",
            body:
                #"{"check_id":"c1","status":"ACCEPTED","_links":{"check_url":{"href":"https://api.example/c1/redirect"}}}"#
        )
    }

    static func problem(_ status: Int, _ key: String, _ title: String) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: "application/problem+json",
            body:
                #"{"type":"https://developer.tru.id/docs/reference/api-errors#\#(key)","title":"\#(title)","status":\#(status)}"#
        )
    }
}

/// `cellpath serve` in a network namespace of its own, with a `StubAPI` as its tru.ID API on
/// the namespace's loopback; deleted afterwards.
final class StubbedServe {
    let namespace: String
    let api = StubAPI()
    let apiPort: Int
    let log: String
    private let apiServer: HTTPServer
    private var serve: BackgroundProcess?

    init() throws {
        namespace = "cptest-serve-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        log = "/tmp/\(namespace).log"
        try Self.check(["ip", "netns", "add", namespace])
        do {
            try Self.check(["ip", "-n", namespace, "link", "set", "lo", "up"])
            let fd = cshims_netns_listen_socket("/run/netns/\(namespace)", "127.0.0.1", 0)
            try #require(fd >= 0, "no listening socket in \(namespace)")
            let api = self.api
            apiServer = try HTTPServer(listener: .socket(fd)) { api.answer($0) }
            apiPort = apiServer.port
        } catch {
            _ = try? ProcessRunner.run(["ip", "netns", "delete", namespace])
            throw error
        }
    }

    deinit {
        serve?.stop()
        apiServer.stop()
        _ = try? ProcessRunner.run(["ip", "netns", "delete", namespace])
        unlink(log)
    }

    /// Runs `cellpath serve ARGS…` on 127.0.0.1:8080 until it logs that it listens, or until it exits
    /// (then returns its exit status).
    @discardableResult
    func start(_ arguments: [String] = [], clientSecret: String = "secret", apiBase: String? = nil) throws -> Int32? {
        let environment = [
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/tmp/\(namespace)", "CELLPATH_CLIENT_ID": "id",
            "CELLPATH_CLIENT_SECRET": clientSecret
        ]
        let process = try BackgroundProcess(
            [
                "ip", "netns", "exec", namespace, CellpathBinary.path, "serve",
                "--api-base", apiBase ?? "http://127.0.0.1:\(apiPort)", "--listen", "127.0.0.1:8080"
            ] + arguments,
            output: log, environment: environment)
        serve = process
        var listening = false, exited = false
        Poll.until(timeout: .seconds(20)) {
            listening = logText.contains(#""event":"listening""#)
            exited = !listening && process.wait(timeoutMs: 0)
            return listening || exited
        }
        if listening { return nil }
        if exited { return process.exitStatus }
        throw CellpathError(.temporary, "serve did not start: \(logText)")
    }

    var logText: String { (try? ProcessRunner.run(["cat", log]).stdout) ?? "" }

    /// SIGTERM to serve; its exit status.
    func stop() -> Int32? {
        guard let serve else { return nil }
        kill(serve.pid, SIGTERM)
        return serve.wait(timeoutMs: 15_000) ? serve.exitStatus : nil
    }

    var servePID: pid_t? { serve?.pid }

    /// curl in the namespace; status, headers (lower-case names) and JSON body.
    func curl(_ arguments: [String]) throws -> (status: Int, headers: [String: String], json: JSONValue?) {
        let headers = "/tmp/\(namespace).headers"
        defer { unlink(headers) }
        let result = try Curl.run(
            in: namespace,
            ["--max-time", "60", "-D", headers, "-w", "\n%{http_code}"]
                + arguments)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        var fields: [String: String] = [:]
        for line in (try ProcessRunner.run(["cat", headers]).stdout).split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = String(line[line.index(after: colon)...].drop { $0 == " " })
        }
        return (Int(lines.last ?? "") ?? 0, fields, try? JSONValue.parse(lines.dropLast().joined(separator: "\n")))
    }

    /// POST of a JSON body to serve.
    func post(
        _ path: String, json: String, _ extra: [String] = []
    ) throws -> (status: Int, headers: [String: String], json: JSONValue?) {
        try curl(["-H", "Content-Type: application/json", "-d", json] + extra + ["http://127.0.0.1:8080\(path)"])
    }

    /// serve's token requests, from its /metrics.
    func tokenRequests() throws -> Int? {
        let text = try Curl.run(in: namespace, ["http://127.0.0.1:8080/metrics"]).stdout
        return text.split(separator: "\n").first { $0.hasPrefix("cellpath_serve_token_requests_total ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    private static func check(_ arguments: [String]) throws {
        let result = try ProcessRunner.run(arguments)
        try #require(result.status == 0, "\(arguments.joined(separator: " ")): \(result.stderr)")
    }
}
