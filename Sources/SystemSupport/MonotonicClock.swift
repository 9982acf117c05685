import Glibc

/// Seconds on the monotonic clock (`CLOCK_MONOTONIC`), for deadlines and elapsed times.
/// Any thread.
public enum MonotonicClock {
    /// Now, in seconds since an arbitrary fixed point.
    public static var now: Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Seconds since `start` (a value of `now`).
    public static func elapsed(since start: Double) -> Double { now - start }
}

/// Seconds since the Unix epoch on the real-time clock (`CLOCK_REALTIME`), microsecond precision.
public enum WallClock {
    public static var now: Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec / 1000) / 1e6
    }
}
