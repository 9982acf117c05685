import CellpathCore
import Testing

/// A receiver's report becomes a fix only when it holds a position within the globe's ranges
/// and is not stale; anything else is no fix, with the reason, never an invented position.
@Suite struct GNSSFixTests {
    static let now = 1_764_720_000.0

    @Test func aReportWithPositionAccuracyAndTimeIsAFixWithItsAge() throws {
        let reading = GNSSFix.reading(
            latitude: 51.5072, longitude: -0.1276, accuracyMeters: 12.5, fixTime: Self.now - 3, now: Self.now)
        let fix = try #require(reading.fix)
        #expect(fix.position == GeoPosition(latitude: 51.5072, longitude: -0.1276))
        #expect(fix.accuracyMeters == 12.5)
        #expect(fix.fixTime == Self.now - 3)
        #expect(fix.ageSeconds == 3)
    }

    @Test func noPositionIsNoFix() {
        let reading = GNSSFix.reading(latitude: nil, longitude: 4, accuracyMeters: 5, fixTime: Self.now, now: Self.now)
        #expect(reading == .noFix("the receiver reported no position"))
    }

    @Test(arguments: [(91.0, 0.0), (-90.5, 10.0), (45.0, 180.01), (Double.nan, 1.0), (1.0, -Double.infinity)])
    func aPositionOutOfRangeIsNoFix(latitude: Double, longitude: Double) {
        let reading = GNSSFix.reading(
            latitude: latitude, longitude: longitude, accuracyMeters: nil, fixTime: nil, now: Self.now)
        #expect(reading.fix == nil)
        guard case .noFix(let reason) = reading else { return }
        #expect(reason.contains("out of range"))
    }

    @Test func aStaleFixIsNoFix() {
        let reading = GNSSFix.reading(
            latitude: 10, longitude: 20, accuracyMeters: 5, fixTime: Self.now - GNSSFix.maximumAge - 1, now: Self.now)
        #expect(reading == .noFix("the receiver's last fix is 601 s old (stale)"))
        let fresh = GNSSFix.reading(
            latitude: 10, longitude: 20, accuracyMeters: 5, fixTime: Self.now - GNSSFix.maximumAge, now: Self.now)
        #expect(fresh.fix?.ageSeconds == GNSSFix.maximumAge)
    }

    @Test func anAccuracyOrTimeThatCannotBeTrueIsLeftOut() throws {
        let ahead = try #require(
            GNSSFix.reading(latitude: 1, longitude: 2, accuracyMeters: -1, fixTime: Self.now + 3600, now: Self.now).fix)
        #expect(ahead.accuracyMeters == nil)
        #expect(ahead.fixTime == nil)
        #expect(ahead.ageSeconds == nil)
        let infinite = try #require(
            GNSSFix.reading(latitude: 1, longitude: 2, accuracyMeters: .infinity, fixTime: 0, now: Self.now).fix)
        #expect(infinite.accuracyMeters == nil)
        #expect(infinite.fixTime == nil)
    }

    @Test func aFixTimeSlightlyAheadIsAgeZero() throws {
        let fix = try #require(
            GNSSFix.reading(latitude: 1, longitude: 2, accuracyMeters: nil, fixTime: Self.now + 2, now: Self.now).fix)
        #expect(fix.ageSeconds == 0)
    }
}
