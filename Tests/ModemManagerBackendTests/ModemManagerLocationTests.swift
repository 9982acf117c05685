import Testing

@testable import ModemManagerBackend

/// GPS raw's UTC time is NMEA's time of day: it becomes today's instant, yesterday's just
/// after midnight; anything that is not `hhmmss[.ss]` is no time.
@Suite struct ModemManagerLocationTests {
    /// 2025-12-03 10:00:00 UTC, and that day's midnight.
    static let now = 1_764_756_000.0
    static let midnight = 1_764_720_000.0

    @Test func aTimeOfDayIsTodays() {
        #expect(ModemManagerModem.nmeaTime("095958", now: Self.now) == Self.now - 2)
        #expect(ModemManagerModem.nmeaTime("095958.50", now: Self.now) == Self.now - 1.5)
    }

    @Test func aTimeAheadOfNowIsYesterdays() {
        #expect(ModemManagerModem.nmeaTime("235950", now: Self.midnight + 30) == Self.midnight - 10)
    }

    @Test(arguments: ["", "9595", "0959580", "25000", "250000", "096000", "0959a8", "095958.x", "+95958"])
    func otherTextIsNoTime(text: String) {
        #expect(ModemManagerModem.nmeaTime(text, now: Self.now) == nil)
    }
}
