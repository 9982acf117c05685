import Glibc
import HTTPServer
import TestSupport
import Testing

/// One client address cannot keep the server from others: not by holding thousands of idle
/// connections, nor by hundreds that each drip a header byte now and then (slowloris), which
/// an idle timeout alone never closes.
@Suite(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .serialized, .ownThreads)
struct HTTPServerSlowClientTests {
    static let idleConnections = 10_000
    static let drippingConnections = 600

    /// A request from 127.0.0.1 on a connection of its own; whether it got a 200.
    private func answered(_ ns: TestNamespace, _ port: Int) -> Bool {
        guard let client = try? RawClient(namespace: ns.name, port: port) else { return false }
        client.send("GET /other-client HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return client.receiveUntilClosed(waitSeconds: 10).text.hasPrefix("HTTP/1.1 200")
    }

    @Test func anotherAddressIsServedWhileOneHoldsAndDripsConnections() async throws {
        let ns = try TestNamespace()
        // serve's defaults, but for a request deadline short enough to pass within the test; the
        // idle timeout is far beyond the test's length, so that only the deadline can close a dripping connection.
        let limits = HTTPServer.Limits(
            maxConnections: 512, maxConnectionsPerAddress: 64, idleTimeoutSeconds: 600, requestTimeoutSeconds: 3)
        let server = try HTTPServer(
            listener: .socket(try ns.listeningSocket()), limits: limits, maxRequestsInFlight: 256
        ) { _ in
            HTTPResponse(status: 200, contentType: "text/plain", body: "ok\n")
        }
        defer { server.stop() }
        #expect(answered(ns, server.port), "the server answers before the attack")

        // The attacker stops opening connections once the server's backlog no longer takes them.
        var dripping: [RawClient] = []
        for _ in 0 ..< Self.drippingConnections {
            guard
                let client = try? RawClient(
                    namespace: ns.name, port: server.port, source: "127.0.0.2", connectSeconds: 2)
            else { break }
            client.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            dripping.append(client)
        }
        var idle: [RawClient] = []
        for _ in 0 ..< Self.idleConnections {
            guard
                let client = try? RawClient(
                    namespace: ns.name, port: server.port, source: "127.0.0.2", connectSeconds: 2)
            else { break }
            idle.append(client)
        }
        #expect(
            dripping.count == Self.drippingConnections && idle.count == Self.idleConnections,
            "the attacker opened \(dripping.count) dripping and \(idle.count) idle connections")
        // Each dripping connection sends a header byte every second, for three request deadlines;
        // meanwhile another client asks once a second.
        var answers: [Bool] = []
        for round in 0 ..< 9 {
            for client in dripping { client.send(round % 2 == 0 ? "X" : "\r\n") }
            answers.append(answered(ns, server.port))
            try await Task.sleep(for: .seconds(1))
        }
        #expect(answers.allSatisfy { $0 }, "the other client was refused at times: \(answers)")
        #expect(dripping.filter { !$0.isClosedByServer }.isEmpty, "a connection dripping header bytes stays open")
        #expect(idle.filter { !$0.isClosedByServer }.isEmpty, "an idle connection outlives the request deadline")
        #expect(answered(ns, server.port), "the server answers after the attack")
    }

    @Test func aConnectionIsKeptForItsNextRequestWithinTheDeadline() throws {
        let ns = try TestNamespace()
        let limits = HTTPServer.Limits(idleTimeoutSeconds: 600, requestTimeoutSeconds: 30)
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket()), limits: limits, maxRequestsInFlight: 4)
        { request in
            HTTPResponse(status: 200, contentType: "text/plain", body: "\(request.path)\n")
        }
        defer { server.stop() }
        let client = try RawClient(namespace: ns.name, port: server.port)
        client.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
        usleep(200_000)
        client.send("GET /second HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let (text, closed) = client.receiveUntilClosed(waitSeconds: 10)
        #expect(text.contains("/first\n") && text.contains("/second\n"), "\(text)")
        #expect(closed)
    }
}
