import CellpathCore
import Modems
import Synchronization

/// Follows a modem's indications for one run: counts them, remembers whether the network took
/// the bearer down, and wakes the tasks waiting for the next one (a registration that may come).
/// Any thread.
public final class IndicationFollower: Sendable {
    private struct State {
        /// Indications received so far.
        var count = 0
        /// The network's reason, once an indication said the bearer went down.
        var bearerDropped: String?
        var ended = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waits woken (cancelled) before they were stored.
        var woken: Set<Int> = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())
    private let onIndication: @Sendable (ModemIndication) -> Void

    /// Starts consuming `stream`; `onIndication` sees each indication first (for logging and
    /// for the path's watchers).
    public init(
        _ stream: AsyncStream<ModemIndication>, onIndication: @escaping @Sendable (ModemIndication) -> Void = { _ in }
    ) {
        self.onIndication = onIndication
        Task { [self] in
            for await indication in stream { receive(indication) }
            let waiters = state.withLock { state in
                state.ended = true
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Indications received so far: pass it to `waitForIndication(after:until:)`.
    public var count: Int { state.withLock { $0.count } }

    /// The network's reason (or `no reason given`) once the bearer went down by an indication.
    public var bearerDropped: String? { state.withLock { $0.bearerDropped } }

    /// Forgets a drop seen before the bearer (re)connected.
    func clearDrop() { state.withLock { $0.bearerDropped = nil } }

    private func receive(_ indication: ModemIndication) {
        onIndication(indication)
        let waiters = state.withLock { state in
            state.count += 1
            if case .bearer(let bearer, let reason) = indication, bearer == .disconnected || bearer == .disconnecting {
                state.bearerDropped = reason ?? "no reason given"
            }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once an indication beyond the first `count` arrived, at `deadline`, when the
    /// stream ended, or when the task is cancelled; whichever comes first.
    public func waitForIndication(after count: Int, until deadline: ContinuousClock.Instant) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = Task { [self] in
            guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
            wake(id)
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.count > count || state.ended || state.woken.remove(id) != nil { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            wake(id)
        }
    }

    /// Ends the wait `id` (its deadline passed, or its task was cancelled).
    private func wake(_ id: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.woken.insert(id)
                return nil
            }
            return waiter
        }
        waiter?.resume()
    }
}
