import Synchronization
import SystemSupport

/// The async handler calls in flight: at most `limit` at once, all cancelled by `cancelAll()`.
/// Safe to use from any thread.
final class InFlightRequests: Sendable {
    /// Why `start` did not run an operation.
    enum Refusal: Error {
        /// `limit` operations are already running.
        case atLimit
        /// `cancelAll()` was called: the server is stopping.
        case stopping
    }

    private struct State {
        var running: [UInt64: Task<Void, Never>] = [:]
        var nextID: UInt64 = 0
        var isStopping = false
    }

    let limit: Int
    private let state = Mutex(State())
    /// Started operations whose completion has not returned yet.
    private let unsettled = WaitableValue(0)

    init(limit: Int) { self.limit = limit }

    /// Starts `operation` as a detached task when fewer than `limit` run and the server is not
    /// stopping. The task leaves the count when `operation` returns, before it passes the
    /// result to `completion`, so that a client answered at the bound may retry at once.
    func start<Result: Sendable>(
        _ operation: @escaping @Sendable () async -> Result,
        completion: @escaping @Sendable (Result) -> Void
    ) throws(Refusal) {
        try state.withLock { current throws(Refusal) in
            if current.isStopping { throw .stopping }
            if current.running.count >= limit { throw .atLimit }
            let id = current.nextID
            current.nextID += 1
            unsettled.update { $0 += 1 }
            current.running[id] = Task.detached {
                let result = await operation()
                self.finished(id)
                completion(result)
                self.unsettled.update { $0 -= 1 }
            }
        }
    }

    /// Refuses every later `start` and cancels the running tasks.
    func cancelAll() {
        let running = state.withLock { current in
            current.isStopping = true
            return Array(current.running.values)
        }
        running.forEach { $0.cancel() }
    }

    /// Blocks the calling thread (never the cooperative pool, which the operations need) until
    /// every started operation has returned and its completion too.
    func waitUntilSettled() {
        _ = unsettled.wait { $0 == 0 }
    }

    private func finished(_ id: UInt64) {
        _ = state.withLock { $0.running.removeValue(forKey: id) }
    }
}
