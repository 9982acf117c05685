import Glibc
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// The simulated modems' radio (serving cell and signal) as the real qmicli and mbimcli read it,
/// before and after a handover.
@Suite("Radio reports checked by qmicli and mbimcli", .serialized, .ownThreads)
struct RadioClientTests {
    static let cells = [
        SimulatedCell(
            cellId: 0x0123_4567, tac: 0x1234, pci: 211, band: 20, channel: 6300, rssiDbm: -65, rsrpDbm: -88,
            rsrqDb: -7, sinrDb: 18.5),
        SimulatedCell(rat: .umts, cellId: 0x0042_0042, tac: 0x0777, pci: 0, band: 1, channel: 10700, rssiDbm: -97)
    ]
    static func modem(_ proto: ModemProtocol, device: DeviceProfile.Name = .simulated) -> SimulatedModem {
        var modem = SimulatedModem(
            protocol: proto, imei: "867530912345678",
            sim: SimulatedSIM(iccid: "8931440301234567890", imsi: "204080123456789", msisdn: "+31612345678"),
            network: SimulatedNetwork(mcc: "204", mnc: "08", operatorName: "Cellpath NL", cells: cells))
        modem.device = device
        return modem
    }

    @Test func qmiSignalCellAndBand() throws {
        let h = try ModemHarness(Self.modem(.qmi))
        let signal = try h.qmicli("--nas-get-signal-info")
        #expect(signal.status == 0, "\(signal.stderr)")
        #expect(signal.stdout.contains("LTE:"), "\(signal.stdout)")
        #expect(field("RSSI", in: signal.stdout) == "-65 dBm", "\(signal.stdout)")
        #expect(field("RSRQ", in: signal.stdout) == "-7 dB")
        #expect(field("RSRP", in: signal.stdout) == "-88 dBm")
        #expect(field("SNR", in: signal.stdout) == "18.5 dB")
        let cell = try h.qmicli("--nas-get-cell-location-info")
        #expect(cell.status == 0, "\(cell.stderr)")
        #expect(field("Tracking Area Code", in: cell.stdout) == "4660", "\(cell.stdout)")
        #expect(field("Global Cell ID", in: cell.stdout) == "19088743")
        #expect(field("EUTRA Absolute RF Channel Number", in: cell.stdout)?.hasPrefix("6300") == true)
        #expect(field("Serving Cell ID", in: cell.stdout) == "211")
        let band = try h.qmicli("--nas-get-rf-band-info")
        #expect(band.status == 0, "\(band.stderr)")
        #expect(field("Active Band Class", in: band.stdout) == "eutran-20", "\(band.stdout)")
        #expect(field("Active Channel", in: band.stdout) == "6300")
    }

    @Test func qmiHandoverToUMTS() throws {
        let h = try ModemHarness(Self.modem(.qmi))
        #expect(h.device.handover(to: 1))
        #expect(!h.device.handover(to: 2))
        #expect(
            try Poll.until(timeout: .seconds(5)) {
                let r = try h.qmicli("--nas-get-serving-system")
                return r.stdout.contains("umts")
            })
        let signal = try h.qmicli("--nas-get-signal-info")
        #expect(signal.stdout.contains("WCDMA:"), "\(signal.stdout)")
        #expect(!signal.stdout.contains("LTE:"))
        #expect(field("RSSI", in: signal.stdout) == "-97 dBm")
        let band = try h.qmicli("--nas-get-rf-band-info")
        #expect(field("Active Band Class", in: band.stdout) == "wcdma-2100", "\(band.stdout)")
    }

    @Test func mbimSignalStateAndBaseStations() throws {
        let h = try ModemHarness(Self.modem(.mbim, device: .pcieMHIMBIM))
        let signal = try h.mbimcli("--query-signal-state")
        #expect(signal.status == 0, "\(signal.stderr)")
        #expect(field("RSSI [0-31,99]", in: signal.stdout) == "24", "\(signal.stdout)")
        let cells = try h.mbimcli("--ms-query-base-stations-info")
        #expect(cells.status == 0, "\(cells.stderr)")
        #expect(cells.stdout.contains("LTE Serving cell:"), "\(cells.stdout)")
        #expect(field("Provider id", in: cells.stdout) == "20408")
        #expect(field("Cell id", in: cells.stdout) == "19088743")
        #expect(field("EARFCN", in: cells.stdout) == "6300")
        #expect(field("Physical cell id", in: cells.stdout) == "211")
        #expect(field("TAC", in: cells.stdout) == "4660")
        #expect(field("RSRP", in: cells.stdout) == "-88 dBm")
        #expect(h.device.handover(to: 1))
        #expect(
            try Poll.until(timeout: .seconds(5)) {
                try h.mbimcli("--query-registration-state").stdout.contains("umts")
            })
        let after = try h.mbimcli("--ms-query-base-stations-info")
        #expect(field("System type", in: after.stdout) == "umts")
        #expect(after.stdout.contains("LTE serving cell: n/a"), "\(after.stdout)")
    }

    @Test func mbimWithoutExtensionsHasNoBaseStationsInfo() throws {
        let h = try ModemHarness(Self.modem(.mbim))
        let cells = try h.mbimcli("--ms-query-base-stations-info")
        #expect(cells.status != 0)
        #expect(
            cells.stderr.contains("NoDeviceSupport") || cells.stderr.contains("no-device-support"), "\(cells.stderr)")
    }
}
