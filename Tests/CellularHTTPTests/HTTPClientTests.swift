import CellpathCore
import Glibc
import Synchronization
import SystemSupport
import TestSupport
import Testing

@testable import CellularHTTP

/// Single requests over the default network, against a server this test runs on 127.0.0.1.
/// No root, no namespaces, no traffic beyond loopback. On threads of their own: the server waits
/// 5 s for a request, longer than a busy cooperative pool may take to send it.
@Suite(.ownThreads)
struct HTTPClientTests {
    let client = HTTPClient(route: .defaultNetwork)

    @Test func postsAndReadsAJSONResponse() async throws {
        let server = try LoopbackServer()
        let body = Array(#"{"phone_number":"+447940448591"}"#.utf8)
        let received = server.serve([
            LoopbackServer.response(
                201, "Created", headers: ["Content-Type: application/json"],
                body: #"{"check_id":"c1"}"#)
        ])
        let response = try await client.send(
            HTTPClientRequest(
                url: "http://127.0.0.1:\(server.port)/subscriber_check/v0.2/checks?x=1", method: "POST",
                headers: [HTTPHeader("Authorization", "Bearer tok"), HTTPHeader("Content-Type", "application/json")],
                body: body))
        let requests = await received.value
        let request = try #require(requests.first)
        #expect(requests.count == 1)
        #expect(request.line == "POST /subscriber_check/v0.2/checks?x=1 HTTP/1.1")
        #expect(request.header("authorization") == "Bearer tok")
        #expect(request.header("content-type") == "application/json")
        #expect(request.header("user-agent") == CellpathVersion.userAgent)
        #expect(request.body == body)
        #expect(response.status == 201)
        #expect(response.contentType == "application/json" && response.header("content-type") == "application/json")
        #expect(response.json?["check_id"] == .string("c1"))
        #expect(response.body == Array(#"{"check_id":"c1"}"#.utf8) && !response.bodyTruncated)
        #expect(response.trace.index == 1 && response.trace.method == "POST" && response.trace.status == 201)
        #expect(response.trace.remoteAddress == "127.0.0.1" && response.trace.remotePort == Int(server.port))
        #expect(response.trace.dnsAnswers == nil && !response.trace.downgrade)
    }

    /// A host looked up ahead: the next request to it goes to the answers it found, and the
    /// one after, which finds none left, goes as curl resolves it (on the kept connection).
    @Test func aHostLookedUpAheadAnswersTheNextRequest() async throws {
        // `.invalid` never resolves (RFC 6761): the request reaches the server only through the
        // answers looked up ahead, and only the first request takes them.
        let server = try LoopbackServer()
        let received = server.serve([LoopbackServer.response(204, "No Content")])
        let lookups = Mutex<[String]>([])
        let client = HTTPClient(route: .defaultNetwork) { host in
            lookups.withLock { $0.append(host) }
            return ["127.0.0.1"]
        }
        let url = "http://ahead.invalid:\(server.port)/ahead"
        client.resolveAhead(url)
        client.resolveAhead(url)
        let first = try await client.send(HTTPClientRequest(url: url))
        #expect(await received.value.count == 1)
        #expect(first.status == 204)
        #expect(first.trace.remoteAddress == "127.0.0.1", "\(first.trace)")
        #expect(lookups.withLock { $0 } == ["ahead.invalid"])
        client.resolveAhead("http://127.0.0.1:\(server.port)/numeric")
        #expect(lookups.withLock { $0 } == ["ahead.invalid"])
    }

    @Test func aRedirectIsReturnedNotFollowed() async throws {
        let server = try LoopbackServer()
        let received = server.serve([LoopbackServer.response(302, "Found", headers: ["Location: /elsewhere"])])
        let response = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/start"))
        #expect(await received.value.count == 1)
        #expect(response.status == 302)
        #expect(response.header("Location") == "/elsewhere")
        #expect(response.trace.location == nil)
    }

    @Test func anEmptyBodyIsSentWithContentLengthZero() async throws {
        let server = try LoopbackServer()
        let received = server.serve([LoopbackServer.response(204, "No Content")])
        let response = try await client.send(
            HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/empty", method: "POST", body: []))
        let request = try #require(await received.value.first)
        #expect(request.line == "POST /empty HTTP/1.1")
        #expect(request.header("content-length") == "0")
        #expect(request.body.isEmpty)
        #expect(response.status == 204 && response.body.isEmpty)
    }

    @Test func namesResolveWithTheSystemResolver() async throws {
        // Unlike the bound route, the default network lets curl resolve names itself (/etc/hosts here).
        let server = try LoopbackServer()
        let received = server.serve([LoopbackServer.response(200, "OK", body: "hello")])
        let response = try await client.send(HTTPClientRequest(url: "http://localhost:\(server.port)/", ipType: .ipv4))
        #expect(await received.value.first?.header("host") == "localhost:\(server.port)")
        #expect(response.status == 200 && response.body == Array("hello".utf8))
        #expect(response.trace.remoteAddress == "127.0.0.1")
    }

    @Test func theBodyIsReadWholeButKeptCapped() async throws {
        let server = try LoopbackServer()
        let received = server.serve([LoopbackServer.response(200, "OK", body: String(repeating: "x", count: 100))])
        let response = try await client.send(
            HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/big", maxBodyBytes: 10))
        _ = await received.value
        #expect(response.body == Array(repeating: UInt8(ascii: "x"), count: 10))
        #expect(response.bodyTruncated && response.trace.bodyBytes == 100)
    }

    @Test func aRefusedConnectionIsConnectFailed() async throws {
        let port = try LoopbackServer().port  // closed again: nothing listens there
        let failure = await failure(of: HTTPClientRequest(url: "http://127.0.0.1:\(port)/"))
        #expect(failure?.reason == .connectFailed, "\(String(describing: failure))")
    }

    @Test func aSilentServerIsAHopTimeout() async throws {
        let server = try LoopbackServer()
        let received = server.serve([])
        let failure = await failure(
            of: HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/slow", timeout: .milliseconds(300)))
        #expect(await received.value.count == 1)
        #expect(failure?.reason == .hopTimeout, "\(String(describing: failure))")
        // The timed-out connection was closed, not kept: the next request opens its own.
        let next = server.serve([LoopbackServer.response(200, "OK")])
        let response = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/next"))
        #expect(response.status == 200 && !response.trace.connectionReused)
        #expect(await next.value.count == 1)
    }

    @Test func cancellingTheTaskAbortsTheRequest() async throws {
        let server = try LoopbackServer()
        let received = server.serve([])
        let client = client
        let request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/hang", timeout: .seconds(10))
        let task = Task { () -> FetchFailure? in
            do throws(FetchFailure) {
                _ = try await client.send(request)
                return nil
            } catch {
                return error
            }
        }
        try await server.waitForRequests(1)  // the transfer is waiting for the answer
        let cancelled = ContinuousClock.now
        task.cancel()
        let failure = await task.value
        #expect(failure?.reason == .cancelled, "\(String(describing: failure))")
        // Cancelled well before the 10 s timeout could have ended it.
        #expect(ContinuousClock.now - cancelled < .seconds(5))
        #expect(await received.value.count == 1)
        // The cancelled connection was closed, not kept, and the client goes on serving requests.
        let next = server.serve([LoopbackServer.response(200, "OK")])
        let response = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/next"))
        #expect(response.status == 200 && !response.trace.connectionReused)
        #expect(await next.value.count == 1)
    }

    @Test func sequentialSendsReuseTheConnectionWithTheirOwnSettings() async throws {
        let server = try LoopbackServer()  // accepts one connection only
        let received = server.serve([
            LoopbackServer.response(200, "OK", headers: ["Set-Cookie: s=1"], body: String(repeating: "x", count: 20)),
            LoopbackServer.response(201, "Created", body: String(repeating: "y", count: 20))
        ])
        let url = "http://127.0.0.1:\(server.port)/"
        let first = try await client.send(HTTPClientRequest(url: url + "a", maxBodyBytes: 10))
        let second = try await client.send(HTTPClientRequest(url: url + "b", method: "POST", body: Array("z".utf8)))
        let requests = await received.value
        #expect(requests.map(\.line) == ["GET /a HTTP/1.1", "POST /b HTTP/1.1"])
        #expect(!first.trace.connectionReused && first.bodyTruncated && first.body.count == 10)
        #expect(
            second.trace.connectionReused && second.status == 201 && !second.bodyTruncated && second.body.count == 20)
        #expect(second.trace.localPort == first.trace.localPort)
        // Another caller's request carries no cookie from the previous one.
        #expect(requests.last?.header("cookie") == nil && requests.last?.body == Array("z".utf8))
    }

    @Test func aConnectionIdleBeyondItsLimitIsClosed() async throws {
        // curl counts idle time in whole seconds: an idle limit of zero lets a connection idle
        // for a second or more go.
        let client = HTTPClient(route: .defaultNetwork, idleLimit: .zero)
        let server = try LoopbackServer()
        let ok = LoopbackServer.response(200, "OK")
        let firstConnection = server.serve([ok, ok])
        let first = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/"))
        try await Task.sleep(for: .milliseconds(1_100))
        let secondConnection = server.serve([ok])
        let second = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/"))
        #expect(!first.trace.connectionReused && !second.trace.connectionReused)
        // The expired connection was closed (its server saw it end), not used again.
        let (firstCount, secondCount) = (await firstConnection.value.count, await secondConnection.value.count)
        #expect(firstCount == 1 && secondCount == 1)
    }

    @Test func manyConcurrentSendsCompleteAndTheConnectionsKeptAreBounded() async throws {
        let client = HTTPClient(route: .defaultNetwork, maxConnections: 8)
        let server = try LoopbackServer()
        let ok = LoopbackServer.response(200, "OK", body: "ok")
        let concurrent = 50
        // One server thread per connection the two rounds may open, each answering all it gets.
        for _ in 0 ..< 2 * concurrent { _ = server.serve(Array(repeating: ok, count: 2 * concurrent)) }
        let request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/")
        func round() async throws -> [HTTPClientResponse] {
            try await withThrowingTaskGroup(of: HTTPClientResponse.self) { group in
                for _ in 0 ..< concurrent { group.addTask { try await client.send(request) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        let first = try await round()
        #expect(first.count == concurrent && first.allSatisfy { $0.status == 200 && $0.body == Array("ok".utf8) })
        // The connections beyond the bound are closed as their transfers end; on a loaded machine
        // (CI runs suites in parallel) their sockets may take a moment to leave ESTABLISHED: the
        // count is read once it has settled, within 3 s.
        let kept = try settledConnections(toPort: server.port)
        #expect((1 ... 8).contains(kept), "\(kept) connections kept open")
        let second = try await round()
        #expect(second.count == concurrent && second.allSatisfy { $0.status == 200 && $0.body == Array("ok".utf8) })
        #expect(second.filter { $0.trace.connectionReused }.count >= kept, "the kept connections were used again")
        #expect((1 ... 8).contains(try settledConnections(toPort: server.port)))
    }

    /// `establishedConnections` once it is within the bound of 8, or after 3 s.
    private func settledConnections(toPort port: UInt16) throws -> Int {
        var count = try establishedConnections(toPort: port)
        _ = try Poll.until(timeout: .seconds(3)) {
            count = try establishedConnections(toPort: port)
            return count <= 8
        }
        return count
    }

    /// This machine's established TCP connections to 127.0.0.1:`port` (the client ends), from /proc/net/tcp.
    private func establishedConnections(toPort port: UInt16) throws -> Int {
        let table = String(decoding: try FileSystem.read("/proc/net/tcp"), as: UTF8.self)
        let hex = String(port, radix: 16, uppercase: true)
        let remote = "0100007F:" + String(repeating: "0", count: 4 - hex.count) + hex
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2] == remote && fields[3] == "01"  // 01: ESTABLISHED
        }.count
    }

    @Test(arguments: [
        (HTTPClientRequest(url: "http://127.0.0.1/a\r\nX-Evil: 1"), FetchFailureReason.malformedURL),
        (HTTPClientRequest(url: "ftp://127.0.0.1/file"), .nonHTTPScheme),
        (HTTPClientRequest(url: "http://127.0.0.1/", method: "GET /x"), .invalidHeader),
        (HTTPClientRequest(url: "http://127.0.0.1/", headers: [HTTPHeader("X-A", "b\r\nX-Evil: 1")]), .invalidHeader)
    ])
    func badInputIsRefusedBeforeAnyConnection(request: HTTPClientRequest, reason: FetchFailureReason) async throws {
        let server = try LoopbackServer()
        var request = request
        request.url = request.url.replacing("127.0.0.1/", with: "127.0.0.1:\(server.port)/")
        let failure = await failure(of: request)
        #expect(failure?.reason == reason, "\(String(describing: failure))")
        #expect(!server.hasPendingConnection)
    }

    @Test func theBoundRouteFailsClosed() async throws {
        // A cellular path whose interface does not exist: refused before any socket is opened.
        let server = try LoopbackServer()
        let path = CellularPath(interfaceName: "cpnone0", ipv4Address: "192.0.2.99", dnsServers: ["192.0.2.53"])
        let failure: FetchFailure?
        do throws(FetchFailure) {
            _ = try await HTTPClient(route: .bound(path)).send(
                HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/"))
            failure = nil
        } catch {
            failure = error
        }
        #expect(failure?.reason == .noSuchInterface, "\(String(describing: failure))")
        #expect(!server.hasPendingConnection)
    }

    /// The failure `client` reports for `request`; nil when it succeeded.
    private func failure(of request: HTTPClientRequest) async -> FetchFailure? {
        do throws(FetchFailure) {
            _ = try await client.send(request)
            return nil
        } catch {
            return error
        }
    }
}

/// An HTTP/1.1 server on 127.0.0.1 for one test: each `serve` accepts one connection and answers
/// its requests with scripted responses, recording what it received. Serves on dedicated threads.
final class LoopbackServer: Sendable {
    /// One request as received.
    struct Received: Sendable {
        var line: String
        var headers: [HTTPHeader]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.last { $0.name.lowercased() == name }?.value
        }
    }

    let port: UInt16
    private let listener: Int32
    private let requestCount = Atomic<Int>(0)

    /// Listens on an ephemeral port of 127.0.0.1.
    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, length) == 0 && listen(fd, 128) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw ServerError("bind/listen on 127.0.0.1: \(errno)")
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(listener) }

    /// True when a client is waiting to be accepted.
    var hasPendingConnection: Bool {
        var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }

    /// A response with a Content-Length for `body`.
    static func response(_ status: Int, _ reason: String, headers: [String] = [], body: String = "") -> String {
        "HTTP/1.1 \(status) \(reason)\r\n" + headers.map { $0 + "\r\n" }.joined()
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    }

    /// Starts at once, on a dedicated thread (a busy cooperative pool cannot delay it), to accept
    /// one connection and answer its requests with `responses` in order (none at all: it stays
    /// silent); what it received is ready once the last response is sent (the connection is then
    /// closed), the client closes, or after 5 s of silence.
    func serve(_ responses: [String]) -> Served {
        let served = Served()
        do {
            try Threads.detach { served.finish(self.serveOneConnection(responses)) }
        } catch {
            served.finish([])
        }
        return served
    }

    /// What one `serve` received, once it is done.
    final class Served: Sendable {
        private let outcome = WaitableValue<[Received]?>(nil)
        fileprivate func finish(_ received: [Received]) { outcome.update { $0 = received } }
        /// The requests received, waiting (on a dedicated thread) until the connection is done.
        var value: [Received] {
            get async { await runOnDedicatedThread { self.outcome.wait { $0 != nil } ?? [] } }
        }
    }

    /// Returns once `count` requests have been received; throws after 30 s.
    func waitForRequests(_ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while requestCount.load(ordering: .acquiring) < count {
            guard ContinuousClock.now < deadline else { throw ServerError("no request within 30 s") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Blocking: runs on the server's dedicated thread.
    private func serveOneConnection(_ responses: [String]) -> [Received] {
        // A client on a busy machine may take a while to connect.
        guard Self.waitReadable(listener, milliseconds: 30_000) else { return [] }
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var buffer: [UInt8] = []
        var received: [Received] = []
        var pending = responses[...]
        while true {
            if let (request, used) = Self.parse(buffer) {
                buffer.removeFirst(used)
                received.append(request)
                requestCount.add(1, ordering: .releasing)
                if let response = pending.popFirst() {
                    let bytes = Array(response.utf8)
                    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if pending.isEmpty { return received }
                }
                continue
            }
            guard Self.waitReadable(fd) else { return received }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return received }
            buffer += chunk[0 ..< n]
        }
    }

    /// A whole request at the start of `buffer` and the bytes it took, or nil when incomplete.
    private static func parse(_ buffer: [UInt8]) -> (Received, Int)? {
        let end: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = buffer.indices.dropLast(3).first(where: { Array(buffer[$0 ..< $0 + 4]) == end }) else {
            return nil
        }
        let lines = String(decoding: buffer[..<headEnd], as: UTF8.self).split(separator: "\r\n").map(String.init)
        let headers = lines.dropFirst().compactMap { line -> HTTPHeader? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return HTTPHeader(String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " }))
        }
        let length = Int(headers.last { $0.name.lowercased() == "content-length" }?.value ?? "0") ?? 0
        let bodyStart = headEnd + 4
        guard buffer.count >= bodyStart + length else { return nil }
        return (
            Received(line: lines.first ?? "", headers: headers, body: Array(buffer[bodyStart ..< bodyStart + length])),
            bodyStart + length
        )
    }

    /// Waits up to `milliseconds` (5 s unless told) for `fd` to become readable.
    private static func waitReadable(_ fd: Int32, milliseconds: Int32 = 5000) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) == 1
    }
}

struct ServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
