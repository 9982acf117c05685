import Glibc
import SystemSupport

/// Waiting for something to happen by checking it until a deadline, rather than sleeping a fixed
/// time: as short as the event allows, as long as a slow machine needs.
public enum Poll {
    /// Checks `condition` every `interval` until it holds or `timeout` has passed; whether it held.
    @discardableResult
    public static func until(
        timeout: Duration, interval: Duration = .milliseconds(20),
        _ condition: () throws -> Bool
    ) rethrows -> Bool {
        let deadline = MonotonicClock.now + seconds(timeout)
        while true {
            if try condition() { return true }
            if MonotonicClock.now >= deadline { return false }
            usleep(UInt32(seconds(interval) * 1_000_000))
        }
    }

    /// As `until`, from async code: suspends between checks instead of blocking a thread.
    @discardableResult
    public static func suspendingUntil(
        timeout: Duration, interval: Duration = .milliseconds(20),
        _ condition: () async throws -> Bool
    ) async throws -> Bool {
        let deadline = MonotonicClock.now + seconds(timeout)
        while true {
            if try await condition() { return true }
            if MonotonicClock.now >= deadline { return false }
            try await Task.sleep(for: interval)
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (whole, fraction) = duration.components
        return Double(whole) + Double(fraction) / 1e18
    }
}
