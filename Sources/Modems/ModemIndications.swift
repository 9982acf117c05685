import CellpathCore
import Synchronization

/// Hands the indications that a signal handler decodes on the loop thread to the task that
/// follows them. Any thread.
public final class IndicationSink: Sendable {
    public let stream: AsyncStream<ModemIndication>
    private let continuation: AsyncStream<ModemIndication>.Continuation

    public init() {
        (stream, continuation) = AsyncStream.makeStream(of: ModemIndication.self)
    }

    public func yield(_ indication: ModemIndication) { continuation.yield(indication) }

    /// Ends the stream: the session is closed.
    public func finish() { continuation.finish() }
}

/// Async calls that throw `ModemError` as values: for `async let`, whose `try await` would
/// widen the error to `any Error`.
enum ModemResult {
    static func of<Value>(_ body: () async throws(ModemError) -> Value) async -> Result<Value, ModemError> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
}

/// Tells a task that a request is on its way (its `start` ran), before its answer. Any thread.
final class SentSignal: Sendable {
    private struct State {
        var sent = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Marks the request as sent (again: no effect) and wakes the waiting task.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.sent = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns once `signal()` was called.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let sent = state.withLock { state -> Bool in
                if !state.sent { state.waiter = continuation }
                return state.sent
            }
            if sent { continuation.resume() }
        }
    }
}
