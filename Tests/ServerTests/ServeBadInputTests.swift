import CShims
import CellpathCore
import Glibc
import TestSupport
import Testing

/// The bad-input table of `cellpath serve` (docs/serve.md) beyond ServeFlowTests: slow clients,
/// large headers and bodies, per-client rate limits, control characters, form vs JSON, wrong
/// types, unknown routes and methods; against a stub API in a namespace of the test's own.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ServeBadInputTests {
    static let create = #"{"phone_number":"+447940448591"}"#

    /// A TCP connection to serve from inside its namespace that sends `bytes` and then nothing;
    /// true when serve closes it (end of file or reset) within `waitSeconds`.
    private func serveCloses(_ serve: StubbedServe, after bytes: String, waitSeconds: Int) throws -> Bool {
        var error = [CChar](repeating: 0, count: 256)
        let fd = cshims_socket_in_netns(
            "/run/netns/\(serve.namespace)", AF_INET, Int32(SOCK_STREAM.rawValue), 0, &error, error.count)
        try #require(fd >= 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: waitSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var peer = sockaddr_in()
        peer.sin_family = sa_family_t(AF_INET)
        peer.sin_port = UInt16(8080).bigEndian
        peer.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        _ = Array(bytes.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 || (count < 0 && errno == ECONNRESET) { return true }
            if count < 0 { return false }  // the receive timeout: still open
        }
    }

    @Test func slowClientsAreDisconnected() throws {
        let serve = try StubbedServe()
        try serve.start(["--client-timeout", "2"])
        #expect(
            try serveCloses(serve, after: "POST /subscriber-check HTTP/1.1\r\nHost: x\r\n", waitSeconds: 20),
            "a header never finished")
        #expect(
            try serveCloses(
                serve,
                after: "POST /subscriber-check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100\r\n\r\n{\"phone", waitSeconds: 20), "a body never finished")
        #expect(try serve.post("/subscriber-check", json: Self.create).status == 200, "others are still served")
    }

    /// A TCP connection to serve from inside its namespace, from `source` (a 127.0.0.0/8 address).
    private func openConnection(_ serve: StubbedServe, from source: String = "127.0.0.1") throws -> Int32 {
        var error = [CChar](repeating: 0, count: 256)
        let fd = cshims_socket_in_netns(
            "/run/netns/\(serve.namespace)", AF_INET, Int32(SOCK_STREAM.rawValue), 0, &error, error.count)
        try #require(fd >= 0)
        var local = sockaddr_in(), peer = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        peer.sin_family = sa_family_t(AF_INET)
        peer.sin_port = UInt16(8080).bigEndian
        peer.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        let connected = withUnsafePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        try #require(bound == 0 && connected == 0)
        return fd
    }

    /// Whether serve closed `fd` (end of stream or reset) within `waitSeconds`.
    private func closedByServe(_ fd: Int32, waitSeconds: Int) -> Bool {
        var timeout = timeval(tv_sec: waitSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 { continue }
            return count == 0 || errno == ECONNRESET
        }
    }

    /// A client dripping header bytes is never idle, so only the whole-request deadline closes it.
    @Test func aConnectionDrippingHeaderBytesIsClosedAtTheRequestDeadline() throws {
        let serve = try StubbedServe()
        try serve.start(["--request-timeout", "2", "--client-timeout", "600"])
        let fd = try openConnection(serve)
        defer { close(fd) }
        var closed = false
        for byte in Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: aaaaaaaaaaaaaaaaaaaa".utf8) where !closed
        {
            _ = [byte].withUnsafeBytes { send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
            closed = closedByServe(fd, waitSeconds: 1)
        }
        #expect(closed, "a connection sending a byte a second stayed open")
        #expect(try serve.post("/subscriber-check", json: Self.create).status == 200, "others are still served")
    }

    @Test func connectionsBeyondTheBoundOfOneAddressAreClosedAtOnce() throws {
        let serve = try StubbedServe()
        try serve.start(["--max-connections-per-address", "2"])
        let held = [try openConnection(serve, from: "127.0.0.2"), try openConnection(serve, from: "127.0.0.2")]
        defer { held.forEach { close($0) } }
        let third = try openConnection(serve, from: "127.0.0.2")
        defer { close(third) }
        #expect(closedByServe(third, waitSeconds: 10), "a third connection from one address was kept")
        #expect(held.allSatisfy { !closedByServe($0, waitSeconds: 1) }, "the first two were closed")
        #expect(try serve.post("/subscriber-check", json: Self.create).status == 200, "another address is served")
    }

    @Test func largeHeadersAndBodiesAreRefused() throws {
        let serve = try StubbedServe()
        try serve.start(["--max-body", "1024"])
        let header = try serve.curl([
            "-H", "X-Padding: " + String(repeating: "a", count: 20_000), "http://127.0.0.1:8080/healthz"
        ])
        #expect(header.status == 431)
        let chunked = try serve.post(
            "/subscriber-check",
            json: #"{"phone_number":"+447940448591","pad":""# + String(repeating: "b", count: 4000) + #""}"#,
            ["-H", "Transfer-Encoding: chunked"])
        #expect(chunked.status == 413, "a body without Content-Length is bounded too")
        let declared = try serve.post(
            "/subscriber-check",
            json: #"{"phone_number":"+447940448591","pad":""# + String(repeating: "c", count: 4000) + #""}"#)
        #expect(declared.status == 413, "a Content-Length over the bound is refused at once")
        #expect(serve.api.checkCalls == 0)
        // Both refusals are in the access log and the metrics, although the handler never saw them.
        let refusals = serve.logText.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
            .filter { $0["status"]?.int == 413 }
        #expect(refusals.count == 2, "\(serve.logText)")
        #expect(
            refusals.allSatisfy {
                $0["route"]?.string == "/subscriber-check" && $0["method"]?.string == "POST"
                    && $0["answered_by"]?.string == "http-server" && $0["client"] == nil
            }, "\(refusals)")
        let metrics = try Curl.run(in: serve.namespace, ["http://127.0.0.1:8080/metrics"]).stdout
        #expect(
            metrics.contains(
                #"cellpath_serve_requests_total{provider="truid",route="/subscriber-check",method="POST",status="413"} 2"#
            ),
            "\(metrics)")
    }

    /// A made-up method is counted as `other`: it adds no label value of its own to the metrics.
    @Test func madeUpMethodsShareOneMetricsLabel() throws {
        let serve = try StubbedServe()
        try serve.start()
        for method in ["BREW", "X\"Y"] {
            _ = try serve.curl(["-X", method, "http://127.0.0.1:8080/subscriber-check"])
        }
        let metrics = try Curl.run(in: serve.namespace, ["http://127.0.0.1:8080/metrics"]).stdout
        #expect(metrics.contains("BREW") == false && metrics.contains(#"X"Y"#) == false, "\(metrics)")
        #expect(metrics.contains(#"method="other""#), "\(metrics)")
    }

    @Test func eachClientAddressIsRateLimited() throws {
        let serve = try StubbedServe()
        try serve.start(["--rate-limit", "3"])
        for _ in 0 ..< 3 { #expect(try serve.post("/subscriber-check", json: Self.create).status == 200) }
        let limited = try serve.post("/subscriber-check", json: Self.create)
        #expect(limited.status == 429 && limited.json?["error_message"]?.string == "too many requests")
        #expect(Int(limited.headers["retry-after"] ?? "").map { (1 ... 60).contains($0) } == true)
        #expect(serve.api.checkCalls == 3)
        #expect(try serve.curl(["http://127.0.0.1:8080/healthz"]).status == 200, "health checks are not limited")
    }

    @Test func controlCharactersWrongTypesAndMediaTypes() throws {
        let serve = try StubbedServe()
        try serve.start(["--allow-form-bodies"])
        func message(_ result: (status: Int, headers: [String: String], json: JSONValue?)) -> String? {
            result.status == 400 ? result.json?["error_message"]?.string : "status \(result.status)"
        }
        #expect(
            message(try serve.post("/subscriber-check", json: #"{"phone_number":"+447940448591\u0000"}"#))
                == "phone_number parameter is not valid")
        #expect(
            message(
                try serve.curl([
                    "-d", "phone_number=%2B447940448591%0D%0AX: y", "http://127.0.0.1:8080/subscriber-check"
                ]))
                == "phone_number parameter is not valid")
        #expect(
            message(try serve.post("/subscriber-check", json: #"{"phone_number":["+447940448591"]}"#))
                == "phone_number parameter must be a string")
        #expect(
            message(try serve.post("/subscriber-check", json: #"{"phone_number":true}"#))
                == "phone_number parameter must be a string")
        #expect(
            message(try serve.post("/subscriber-check", json: #"["+447940448591"]"#)) == "the body is not a JSON object"
        )
        #expect(
            message(
                try serve.curl([
                    "-H", "Content-Type: application/x-www-form-urlencoded", "-d", "phone_number=%ZZ",
                    "http://127.0.0.1:8080/subscriber-check"
                ])) == "the form body is not valid")
        // JSON labelled as a form (curl -d's default type) is not read as a form: the answer says what to send.
        #expect(
            message(
                try serve.curl([
                    "-H", "Content-Type: application/x-www-form-urlencoded", "-d", Self.create,
                    "http://127.0.0.1:8080/subscriber-check"
                ]))
                == "the body looks like JSON: send it with Content-Type: application/json")
        let text = try serve.curl([
            "-H", "Content-Type: text/plain", "-d", Self.create, "http://127.0.0.1:8080/subscriber-check"
        ])
        #expect(text.status == 415)
        #expect(serve.api.checkCalls == 0, "nothing reached the API")
        let form = try serve.curl(["-d", "phone_number=%2B447940448591", "http://127.0.0.1:8080/subscriber-check"])
        #expect(form.status == 200 && form.json?["check_id"]?.string == "c1", "a form body works like JSON")
    }

    @Test func unknownRoutesAndWrongMethodsAnswerJSON() throws {
        let serve = try StubbedServe()
        try serve.start()
        let unknown = try serve.curl(["http://127.0.0.1:8080/v0.3/subscriber-check"])
        #expect(unknown.status == 404 && unknown.headers["content-type"] == "application/json")
        #expect(unknown.json?["error_message"]?.string == "no such route")
        let wrong = try serve.curl(["-X", "PUT", "http://127.0.0.1:8080/subscriber-check"])
        #expect(
            wrong.status == 405 && wrong.headers["allow"] == "POST, GET, OPTIONS"
                && wrong.json?["error_message"]?.string == "method not allowed")
        let callback = try serve.curl(["http://127.0.0.1:8080/callback"])
        #expect(callback.status == 405 && callback.headers["allow"] == "POST, OPTIONS")
        #expect(try serve.curl(["-X", "DELETE", "http://127.0.0.1:8080/subscriber-check/c1"]).status == 405)
    }
}
