import SystemSupport

/// The time source of the fake services; tests inject a manual clock.
public struct SimulatorClock: Sendable {
    /// Now, in seconds since the Unix epoch.
    public let now: @Sendable () -> Double

    public init(now: @escaping @Sendable () -> Double) { self.now = now }

    /// The system's wall clock.
    public static let system = SimulatorClock { WallClock.now }

    /// RFC 3339 / ISO 8601 UTC text with seconds, as the tru.ID API writes `created_at`.
    public static func timestamp(_ seconds: Double) -> String {
        WallClock.iso8601(seconds)
    }

    /// ISO 8601 UTC text with milliseconds, for log lines.
    static func preciseTimestamp(_ seconds: Double) -> String {
        WallClock.iso8601(seconds, milliseconds: true)
    }
}
