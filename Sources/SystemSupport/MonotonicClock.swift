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

extension WallClock {
    /// `seconds` since the epoch as an ISO 8601 UTC time, `2026-12-02T23:53:28Z`, or with
    /// `milliseconds` `2026-12-02T23:53:28.123Z`; both truncated, not rounded.
    public static func iso8601(_ seconds: Double, milliseconds: Bool = false) -> String {
        let thousandths = Int64((seconds * 1000).rounded(.down))
        var whole = time_t(thousandths >= 0 ? thousandths / 1000 : (thousandths - 999) / 1000)
        var parts = tm()
        var text = [CChar](repeating: 0, count: 32)
        guard gmtime_r(&whole, &parts) != nil, strftime(&text, text.count, "%Y-%m-%dT%H:%M:%S", &parts) > 0 else {
            return ""
        }
        let fraction = Int(thousandths - Int64(whole) * 1000)
        let millis = String(fraction)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            + (milliseconds ? "." + String(repeating: "0", count: 3 - millis.count) + millis : "") + "Z"
    }
}
