import Glibc
import HTTPServer
import Synchronization
import SystemSupport
import TestSupport
import Testing

/// Holds async handlers until `open()`; a waiter whose task is cancelled throws CancellationError.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Returns once the gate is open, or throws CancellationError when the task is cancelled first.
    func wait() async throws {
        let id = state.withLock { current in
            defer { current.nextID += 1 }
            return current.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let settled: Result<Void, any Error>? = state.withLock { current in
                    if current.isOpen { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    current.waiters[id] = continuation
                    return nil
                }
                if let settled { continuation.resume(with: settled) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// Releases every waiter, now and later.
    func open() {
        let waiters = state.withLock { current in
            current.isOpen = true
            defer { current.waiters = [:] }
            return Array(current.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }
}

/// The status line and header lines of `curl -D - -o /dev/null` output.
private func headerLines(_ result: ProcessResult) -> [String] {
    result.stdout.split(separator: "\r\n").map(String.init)
}

@Suite struct HTTPServerAsyncLimitTests {
    @Test func aLimitBelowOneIsRefused() {
        #expect(throws: (any Error).self) {
            _ = try HTTPServer(listener: .address("127.0.0.1", port: 0), maxRequestsInFlight: 0) { _ in
                HTTPResponse(status: 200)
            }
        }
    }
}

@Suite(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .serialized)
struct HTTPServerAsyncHandlerTests {
    @Test func anAsyncHandlerAnswers() async throws {
        let ns = try TestNamespace()
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket()), maxRequestsInFlight: 4) { request in
            await Task.yield()
            return echo(request)
        }
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/a?x=1"
        let result = try await onOwnThread { try ns.curl(["-H", "x-test: async", "-d", "hello", url]) }
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Set(result.stdout.split(separator: "\n").map(String.init))
        #expect(lines.contains("method=POST"))
        #expect(lines.contains("path=/a"))
        #expect(lines.contains("query:x=1"))
        #expect(lines.contains("x-test=async"))
        #expect(lines.contains("body=hello"))
    }

    @Test func aRequestBeyondTheLimitGets503WhileTheOthersAreHeld() async throws {
        let ns = try TestNamespace()
        let gate = Gate()
        let (entered, enteredSink) = AsyncStream.makeStream(of: String.self)
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket()), maxRequestsInFlight: 2) { request in
            enteredSink.yield(request.path)
            try await gate.wait()
            return HTTPResponse(status: 200, contentType: "text/plain", body: request.path)
        }
        defer {
            gate.open()
            server.stop()
        }
        let url = "http://127.0.0.1:\(server.port)"
        let held = ["/held-1", "/held-2"].map { path in
            Task { try await onOwnThread { try ns.curl(["--max-time", "60", url + path]) } }
        }
        var arrivals = entered.makeAsyncIterator()
        var heldPaths: Set<String> = []
        for _ in held { heldPaths.insert(await arrivals.next() ?? "") }
        #expect(heldPaths == ["/held-1", "/held-2"])

        let refused = try await onOwnThread {
            try ns.curl(["--max-time", "60", "-D", "-", "-o", "/dev/null", url + "/extra"])
        }
        let lines = headerLines(refused)
        #expect(lines.first?.hasPrefix("HTTP/1.1 503") == true, "\(refused.stdout)")
        #expect(lines.contains { $0.lowercased() == "retry-after: 1" })

        gate.open()
        #expect(try await held[0].value.stdout == "/held-1")
        #expect(try await held[1].value.stdout == "/held-2")
        let again = try await onOwnThread { try ns.curl(["--max-time", "60", url + "/again"]) }
        #expect(again.stdout == "/again")
        #expect(await arrivals.next() == "/again")  // the refused request never reached the handler
    }

    @Test func stopCancelsAHandlerInFlightAndWaitsForIt() async throws {
        let ns = try TestNamespace()
        let gate = Gate()
        let (events, eventSink) = AsyncStream.makeStream(of: String.self)
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket()), maxRequestsInFlight: 2) { request in
            eventSink.yield("entered")
            do {
                try await gate.wait()
            } catch {
                eventSink.yield(error is CancellationError ? "cancelled" : "failed")
                throw error
            }
            return HTTPResponse(status: 200)
        }
        let url = "http://127.0.0.1:\(server.port)/held"
        let pending = Task { try await onOwnThread { try ns.curl(["--max-time", "60", url]) } }
        var log = events.makeAsyncIterator()
        #expect(await log.next() == "entered")

        try await onOwnThread { server.stop() }
        eventSink.finish()
        #expect(await log.next() == "cancelled")  // yielded before stop() returned
        #expect(await log.next() == nil)
        let closed = try await pending.value
        #expect(closed.status != 0 && closed.status != 28)  // closed by the server, not answered or timed out
        let refused = try await onOwnThread { try ns.curl(["--max-time", "2", url]) }
        #expect(refused.status == 7)  // the listening socket is gone
    }

    @Test func aHandlerThatThrowsOrIsCancelledGets500() async throws {
        struct HandlerFailure: Error {}
        let ns = try TestNamespace()
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket()), maxRequestsInFlight: 2) { request in
            switch request.path {
            case "/throw":
                throw HandlerFailure()
            case "/cancel":
                withUnsafeCurrentTask { $0?.cancel() }
                try Task.checkCancellation()
            default:
                break
            }
            return HTTPResponse(status: 200, contentType: "text/plain", body: "ok")
        }
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)"
        for path in ["/throw", "/cancel", "/fine"] {
            let result = try await onOwnThread { try ns.curl(["-o", "/dev/null", "-w", "%{http_code}", url + path]) }
            #expect(result.stdout == (path == "/fine" ? "200" : "500"), "\(path)")
        }
    }

    @Test func heldRequestsTakeNoThreadEach() async throws {
        let ns = try TestNamespace()
        let gate = Gate()
        let (entered, enteredSink) = AsyncStream.makeStream(of: String.self)
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket()), maxRequestsInFlight: 64) { request in
            enteredSink.yield(request.path)
            try await gate.wait()
            return HTTPResponse(status: 200, contentType: "text/plain", body: request.path + "\n")
        }
        defer {
            gate.open()
            server.stop()
        }
        let before = threadCount()
        let held = 40
        let urls = (1 ... held).map { "http://127.0.0.1:\(server.port)/held-\($0)" }
        // One curl process with 40 connections at once, so that the test itself adds one thread.
        let pending = Task {
            try await onOwnThread {
                try ns.curl(
                    ["--max-time", "60", "--parallel", "--parallel-immediate", "--parallel-max", "\(held)"] + urls)
            }
        }
        var arrivals = entered.makeAsyncIterator()
        for _ in 1 ... held { _ = await arrivals.next() }
        let during = threadCount()
        // A thread per connection would add at least 40; event threads, the cooperative pool and
        // the curl's own thread add a few.
        #expect(during - before < held / 2, "\(before) threads before, \(during) with \(held) requests held")
        gate.open()
        let answered = try await pending.value
        #expect(answered.status == 0, "\(answered.stderr)")
        #expect(Set(answered.stdout.split(separator: "\n").map(String.init)) == Set((1 ... held).map { "/held-\($0)" }))
    }

    @Test func aDelayedAsyncResponseArrivesLateAndAnUnansweredOneIsClosedByStop() async throws {
        let ns = try TestNamespace()
        let server = try HTTPServer(listener: .socket(try ns.listeningSocket()), maxRequestsInFlight: 4) { request in
            switch request.path {
            case "/never": return .noAnswer
            default:
                var response = HTTPResponse(status: 200, contentType: "text/plain", body: request.path)
                response.delivery = .after(.milliseconds(1500))
                return response
            }
        }
        let url = "http://127.0.0.1:\(server.port)"
        let started = ContinuousClock.now
        let slow = try await onOwnThread { try ns.curl(["--max-time", "20", url + "/slow"]) }
        #expect(slow.stdout == "/slow")
        #expect(started.duration(to: .now) >= .milliseconds(1400))
        let never = Task { try await onOwnThread { try ns.curl(["--max-time", "20", url + "/never"]) } }
        try await Task.sleep(for: .milliseconds(300))
        let stopping = ContinuousClock.now
        try await onOwnThread { server.stop() }
        #expect(stopping.duration(to: .now) < .seconds(3))
        let closed = try await never.value
        #expect(closed.status != 0 && closed.status != 28)  // closed by the server, not answered or timed out
    }
}

/// Threads of this process now.
private func threadCount() -> Int { FileSystem.entries("/proc/self/task")?.count ?? 0 }
