import FoundationEssentials
import SystemSupport
import Testing

/// ISO 8601 times as Foundation's formatters wrote them before (HAR, the fake API, log lines).
@Suite struct WallClockTests {
    @Test(arguments: [
        1_764_719_608.1239, 1_764_719_608.9996, 0.0005, 1_764_719_608, -1.5, 951_782_400.25, 4_102_444_799.999
    ])
    func iso8601IsWhatFoundationWrote(_ seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(WallClock.iso8601(seconds) == date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt)))
        #expect(
            WallClock.iso8601(seconds, milliseconds: true)
                == date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)))
    }
}
