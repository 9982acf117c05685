import SimulatorScenario
import Testing

@testable import SimulatedModems

/// The GGA sentence of the simulated receiver's NMEA traces: the fix's time of day in UTC,
/// degrees and decimal minutes with their hemispheres, and the checksum NMEA readers verify.
@Suite struct LOCServiceTests {
    @Test func aFixIsAGGASentenceWithItsChecksum() {
        // 2025-12-03 10:30:59 UTC.
        let north = LOCService.gga(SimulatedGNSS(lat: 48.8584, lon: 2.2945), at: 1_764_757_859.4)
        #expect(north == "$GPGGA,103059.00,4851.50400,N,00217.67000,E,1,08,0.9,35.0,M,47.0,M,,*5A")
        // 2025-12-04 00:00:01 UTC.
        let south = LOCService.gga(SimulatedGNSS(lat: -33.8568, lon: -151.2153), at: 1_764_806_401)
        #expect(south == "$GPGGA,000001.00,3351.40800,S,15112.91800,W,1,08,0.9,35.0,M,47.0,M,,*58")
    }
}
