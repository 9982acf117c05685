import FoundationEssentials

/// The time source of the fake services; tests inject a manual clock.
public struct SimulatorClock: Sendable {
    public let now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date) { self.now = now }

    /// The system's wall clock.
    public static let system = SimulatorClock { Date() }

    /// RFC 3339 / ISO 8601 UTC text with seconds, as the tru.ID API writes `created_at`.
    public static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
    }

    /// ISO 8601 UTC text with milliseconds, for log lines.
    static func preciseTimestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
}
