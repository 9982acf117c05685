import SystemSupport

/// A one-shot signal that delayed and unanswered requests wait on; `fire()` wakes them all.
/// Safe to use from any thread; the waits block (connection threads only).
final class StopSignal: Sendable {
    private let fired = WaitableValue(false)

    /// Wakes every waiter, now and later.
    func fire() { fired.update { $0 = true } }

    /// Whether `fire()` was called.
    var hasFired: Bool { fired.current }

    /// Waits up to `duration`; returns true when the signal fired.
    func wait(for duration: Duration) -> Bool { fired.wait(until: { $0 }, timeout: duration) }

    /// Waits until the signal fires.
    func waitForever() { _ = fired.wait { $0 } }
}
