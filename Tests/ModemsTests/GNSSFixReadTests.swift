import CellpathCore
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

@testable import Modems

/// The GNSS fix each backend reads from simulated modems (directly, no root): QMI LOC's
/// Position Report with the scenario's fix, no fix (and the bound kept) when the receiver has
/// none, none over MBIM; and how a Position Report's session status is read.
@Suite(.serialized, .timeLimit(.minutes(2)), .ownThreads)
struct GNSSFixReadTests {
    static func read(_ modem: SimulatedModem, within bound: Duration) async throws -> (GNSSReading, SimulatedFleet) {
        let fleet = try SimulatedFleet([modem])
        let backend = try await ModemBackends.open(
            fleet.modems[0].ports[0], access: ModemAccess(useProxy: false), logger: .silent)
        do {
            let reading = try await backend.gnssFix(within: bound)
            await backend.close()
            return (reading, fleet)
        } catch {
            await backend.close()
            throw error
        }
    }

    @Test func qmiReadsTheReceiversFix() async throws {
        var modem = SimulatedModem.test(.qmi, 1)
        modem.gnss = SimulatedGNSS(lat: 48.8584, lon: 2.2945, accuracy: 7.5, ageSeconds: 4)
        let (reading, fleet) = try await Self.read(modem, within: .seconds(5))
        let fix = try #require(reading.fix, "\(reading)")
        #expect(fix.position == GeoPosition(latitude: 48.8584, longitude: 2.2945))
        #expect(fix.accuracyMeters == 7.5)
        let age = try #require(fix.ageSeconds)
        #expect(age >= 3.9 && age < 6, "\(age)")
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    /// A drive: the serving cell's place is the fix, and a handover moves it; a cell without
    /// one leaves the modem's.
    @Test func qmiReadsTheServingCellsPlaceAcrossAHandover() async throws {
        var modem = SimulatedModem.test(.qmi, 1)
        modem.gnss = SimulatedGNSS(lat: 1, lon: 2)
        modem.network.cells = [SimulatedCell(cellId: 1), SimulatedCell(cellId: 2), SimulatedCell(cellId: 3)]
        modem.network.cells[0].gnss = SimulatedGNSS(lat: 51.5007, lon: -0.1246)
        modem.network.cells[1].gnss = SimulatedGNSS(lat: 51.5033, lon: -0.1196)
        let fleet = try SimulatedFleet([modem])
        let backend = try await ModemBackends.open(
            fleet.modems[0].ports[0], access: ModemAccess(useProxy: false), logger: .silent)
        var positions: [GeoPosition?] = []
        for cell in 0 ..< 3 {
            if cell > 0 { #expect(fleet.device(0).handover(to: cell)) }
            positions.append(try await backend.gnssFix(within: .seconds(5)).fix?.position)
        }
        await backend.close()
        #expect(
            positions == [
                GeoPosition(latitude: 51.5007, longitude: -0.1246), GeoPosition(latitude: 51.5033, longitude: -0.1196),
                GeoPosition(latitude: 1, longitude: 2)
            ])
    }

    @Test func qmiWithoutAFixWaitsItsBoundAndReportsNone() async throws {
        let start = ContinuousClock.now
        let (reading, fleet) = try await Self.read(SimulatedModem.test(.qmi, 1), within: .milliseconds(400))
        let took = ContinuousClock.now - start
        #expect(reading.fix == nil)
        guard case .noFix(let reason) = reading else { return }
        #expect(reason.contains("no position report within"), "\(reason)")
        #expect(took >= .milliseconds(400) && took < .seconds(4), "\(took)")
        #expect(fleet.device(0).allocatedQMIClientIDs == 0)
    }

    @Test func mbimHasNoGNSS() async throws {
        var modem = SimulatedModem.test(.mbim, 1)
        modem.gnss = SimulatedGNSS(lat: 1, lon: 2)
        let (reading, _) = try await Self.read(modem, within: .seconds(5))
        #expect(reading == .noFix("MBIM has no standard GNSS service (a vendor's QMI over MBIM is not read)"))
    }

    @Test func aSuccessfulReportIsAFixAndInProgressIsWaitedOn() throws {
        let now = 1_764_756_000.0
        let report = QMIPositionReport(
            sessionStatus: 0, latitude: -33.8568, longitude: 151.2153, horizontalUncertainty: 20,
            utcMilliseconds: UInt64((now - 1.5) * 1000))
        let fix = try #require(report.reading(now: now)?.fix)
        #expect(fix.position == GeoPosition(latitude: -33.8568, longitude: 151.2153))
        #expect(fix.accuracyMeters == 20)
        #expect(fix.ageSeconds == 1.5)
        #expect(QMIPositionReport(sessionStatus: 1, latitude: 1, longitude: 2).reading(now: now) == nil)
    }

    @Test func aFailedOrUnstatedSessionIsNoFixEvenWithAPosition() {
        let timedOut = QMIPositionReport(sessionStatus: 3, latitude: 1, longitude: 2).reading(now: 0)
        #expect(timedOut == .noFix("the LOC session ended without a fix (timeout)"))
        #expect(
            QMIPositionReport(sessionStatus: nil, latitude: 1, longitude: 2).reading(now: 0)
                == .noFix("the position report carried no session status"))
        #expect(QMIPositionReport(sessionStatus: 0).reading(now: 0) == .noFix("the receiver reported no position"))
    }
}
