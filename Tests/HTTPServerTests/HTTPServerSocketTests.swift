import CShims
import Glibc
import HTTPServer
import Synchronization
import SystemSupport
import TestSupport
import Testing

/// A network namespace created for one test and deleted afterwards.
final class TestNamespace: Sendable {
    let name: String
    init() throws {
        name = "cptest-http-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try run(["ip", "netns", "add", name])
        try run(["ip", "-n", name, "link", "set", "lo", "up"])
    }
    deinit { _ = try? ProcessRunner.run(["ip", "netns", "delete", name]) }

    /// A listening TCP socket on 127.0.0.1 (free port) inside the namespace.
    func listeningSocket() throws -> Int32 {
        let fd = cshims_netns_listen_socket("/run/netns/\(name)", "127.0.0.1", 0)
        guard fd >= 0 else { throw ProcessError.spawn("cshims_netns_listen_socket", errno) }
        return fd
    }

    /// Runs `curl -sS ARGS…` inside the namespace.
    func curl(_ arguments: [String], stdin: String = "") throws -> ProcessResult {
        try Curl.run(in: name, arguments, stdin: stdin)
    }

    @discardableResult
    private func run(_ arguments: [String]) throws -> ProcessResult {
        let result = try ProcessRunner.run(arguments)
        guard result.status == 0 else {
            throw ProcessError.spawn(arguments.joined(separator: " ") + ": " + result.stderr, 0)
        }
        return result
    }
}

/// Echoes what the server saw, one `key=value` line per fact.
@Sendable func echo(_ request: HTTPRequest) -> HTTPResponse {
    var lines = [
        "method=\(request.method)", "path=\(request.path)", "target=\(request.target)", "tls=\(request.isTLS)",
        "remote=\(request.remoteAddress)", "port-known=\(request.remotePort > 0)",
        "x-test=\(request.headers["X-TEST"] ?? "-")", "body-length=\(request.body.count)",
        "body=\(request.bodyText)"
    ]
    lines += request.queryItems.map { "query:\($0.name)=\($0.value ?? "<none>")" }
    return HTTPResponse(status: 200, contentType: "text/plain", body: lines.joined(separator: "\n") + "\n")
}

private func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

@Suite(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .serialized, .ownThreads)
struct HTTPServerSocketTests {
    @Test func echoesMethodPathQueryHeadersAndPeer() throws {
        let ns = try TestNamespace()
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket()), handler: echo)
        defer { server.stop() }
        let result = try ns.curl([
            "-H", "x-test: hello", "http://127.0.0.1:\(server.port)/a%20b/c?x=1&y=two%26&flag&x=3&z=%2f"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Set(result.stdout.split(separator: "\n").map(String.init))
        #expect(lines.contains("method=GET"))
        #expect(lines.contains("path=/a b/c"))
        // The target as sent, its percent-encoding untouched (a webhook's signature covers it).
        #expect(lines.contains("target=/a%20b/c?x=1&y=two%26&flag&x=3&z=%2f"), "\(lines)")
        #expect(lines.contains("tls=false"))
        #expect(lines.contains("remote=127.0.0.1"))
        #expect(lines.contains("port-known=true"))
        #expect(lines.contains("x-test=hello"))
        #expect(lines.contains("query:x=1"))
        #expect(lines.contains("query:x=3"))
        #expect(lines.contains("query:y=two&"))
        #expect(lines.contains("query:flag=<none>"))
    }

    @Test func readsChunkedAndLargeBodiesWhole() throws {
        let ns = try TestNamespace()
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket()), handler: echo)
        defer { server.stop() }
        let body = String(repeating: "0123456789abcdef", count: 40_000)  // 640 KB, many chunks
        let result = try ns.curl(
            [
                "-X", "POST", "-H", "Transfer-Encoding: chunked", "--data-binary", "@-",
                "http://127.0.0.1:\(server.port)/upload"
            ], stdin: body)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("body-length=\(body.utf8.count)\n"))
        #expect(result.stdout.contains("method=POST"))
    }

    @Test func sendsRepeatedSetCookieAndStatus() throws {
        let ns = try TestNamespace()
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket())) { _ in
            var headers: HTTPHeaders = [:]
            headers.add("Set-Cookie", "a=1; Path=/")
            headers.add("Set-Cookie", "b=2; Path=/")
            return HTTPResponse.redirect("/next?q=1", status: 302, headers: headers)
        }
        defer { server.stop() }
        let result = try ns.curl(["-D", "-", "-o", "/dev/null", "http://127.0.0.1:\(server.port)/"])
        let lines = result.stdout.split(separator: "\r\n").map(String.init)
        #expect(lines.first?.hasPrefix("HTTP/1.1 302") == true)
        #expect(lines.filter { $0.lowercased().hasPrefix("set-cookie:") }.count == 2)
        #expect(lines.contains { $0.lowercased() == "location: /next?q=1" })
    }

    @Test func aDelayedResponseDoesNotHoldUpOthers() async throws {
        let ns = try TestNamespace()
        let slowArrived = Flag(), slowAnswered = Flag()
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket())) { request in
            var response = HTTPResponse(status: 200, contentType: "text/plain", body: request.path)
            if request.path == "/slow" {
                response.delivery = .after(.seconds(6))
                slowArrived.set()
            }
            return response
        }
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)"
        let start = monotonicSeconds()
        let slow = Task {
            let result = try await onOwnThread { try ns.curl(["\(url)/slow"]) }
            slowAnswered.set()
            return (result, monotonicSeconds())
        }
        // The slow request must be held by the server before the fast one is sent.
        while !slowArrived.isSet {
            try #require(monotonicSeconds() - start < 30, "the slow request never reached the server")
            try await Task.sleep(for: .milliseconds(10))
        }
        let fast = try ns.curl(["\(url)/fast"])
        // Ordering, not speed: the fast answer arrives while the slow one is still held back.
        #expect(!slowAnswered.isSet, "the fast request waited for the slow one")
        #expect(fast.stdout == "/fast")
        let (slowResult, slowDone) = try await slow.value
        #expect(slowResult.stdout == "/slow")
        #expect(slowDone - start >= 6)
    }

    @Test func anUnansweredRequestTimesOutAndStopReleasesIt() async throws {
        let ns = try TestNamespace()
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket())) { _ in .noAnswer }
        let url = "http://127.0.0.1:\(server.port)/"
        let timedOut = try ns.curl(["--max-time", "1", url])
        #expect(timedOut.status == 28)  // CURLE_OPERATION_TIMEDOUT
        let pending = Task { try await onOwnThread { try ns.curl(["--max-time", "20", url]) } }
        try await Task.sleep(for: .milliseconds(300))
        let start = monotonicSeconds()
        server.stop()
        #expect(monotonicSeconds() - start < 3)
        let closed = try await pending.value
        #expect(closed.status != 0 && closed.status != 28)  // closed by the server, not timed out
        let refused = try ns.curl(["--max-time", "2", url])
        #expect(refused.status == 7)  // the listening socket is gone
    }

    @Test func servesTLSWithAnOpenSSLCertificate() throws {
        let ns = try TestNamespace()
        let dir = try TemporaryDirectory.make("cptest-tls")
        defer { FileSystem.removeTree(dir) }
        let made = try ProcessRunner.run([
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
            "-keyout", "\(dir)/key.pem", "-out", "\(dir)/cert.pem", "-days", "1",
            "-subj", "/CN=api.truid.test", "-addext", "subjectAltName=DNS:api.truid.test"
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let tls = try HTTPServer.TLSIdentity.files(certificate: "\(dir)/cert.pem", privateKey: "\(dir)/key.pem")
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket()), tls: tls, handler: echo)
        defer { server.stop() }
        #expect(server.isTLS)
        let result = try ns.curl([
            "--cacert", "\(dir)/cert.pem", "--resolve", "api.truid.test:\(server.port):127.0.0.1",
            "-d", "grant_type=client_credentials", "https://api.truid.test:\(server.port)/oauth2/v1/token"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("tls=true"))
        #expect(result.stdout.contains("body=grant_type=client_credentials"))
        let untrusted = try ns.curl([
            "--resolve", "api.truid.test:\(server.port):127.0.0.1",
            "https://api.truid.test:\(server.port)/"
        ])
        #expect(untrusted.status == 60)  // peer certificate cannot be verified with the system CAs
    }

    @Test func rejectsAMismatchedTLSKey() throws {
        let ns = try TestNamespace()
        let identity = HTTPServer.TLSIdentity(certificatePEM: "not a certificate", privateKeyPEM: "not a key")
        #expect(throws: (any Error).self) {
            _ = try HTTPServer(listener: .socket(try ns.listeningSocket()), tls: identity, handler: echo)
        }
    }
}

/// A flag set once from any thread.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
