import CMBIM
import CQMI
import CellpathCore
import Testing

@testable import Modems

/// The readers' decoding of coded radio values: MBIMEx v2 RSRP/SNR entries, Base Stations
/// Info's unknowns, QMI band names.
@Suite struct RadioParsingTests {
    static func entry(rsrp: UInt32, snr: UInt32, system: MbimDataClass) -> MbimRsrpSnrInfo {
        MbimRsrpSnrInfo(
            rsrp: rsrp, snr: snr, rsrp_threshold: 0xffff_ffff, snr_threshold: 0xffff_ffff,
            system_type: UInt32(truncatingIfNeeded: Int(system.rawValue)))
    }

    @Test func mbimRSRPAndSNRAreDecodedPerSystemType() {
        var radio = RadioContext(source: "mbim")
        MBIMModem.read(
            rsrpSNR: [
                Self.entry(rsrp: 68, snr: 72, system: MBIM_DATA_CLASS_LTE),
                Self.entry(rsrp: 50, snr: 0xffff_ffff, system: MBIM_DATA_CLASS_5G_NSA)
            ], into: &radio)
        #expect(radio.rsrpDbm == -88)
        #expect(radio.sinrDb == 13)
        #expect(radio.ssRsrpDbm == -106)
        #expect(radio.ssSinrDb == nil)
        var unknown = RadioContext(source: "mbim")
        MBIMModem.read(rsrpSNR: [Self.entry(rsrp: 127, snr: 128, system: MBIM_DATA_CLASS_LTE)], into: &unknown)
        #expect(unknown == RadioContext(source: "mbim"))
    }

    @Test func mbimCodedRSSI() {
        #expect(MBIMModem.rssiDbm(0) == -113)
        #expect(MBIMModem.rssiDbm(24) == -65)
        #expect(MBIMModem.rssiDbm(31) == -51)
        #expect(MBIMModem.rssiDbm(99) == nil)
    }

    @Test func mbimServingCellUnknownsStayAbsent() {
        var radio = RadioContext(source: "mbim")
        let lte = MBIMModem.ServingLTECell(
            cellID: 19_088_743, earfcn: 6300, physicalCellID: .max, tac: 4660, rsrp: Int32.max, rsrq: -7)
        MBIMModem.read(MBIMModem.ServingCells(lte: lte), into: &radio)
        #expect(radio.cellID == 19_088_743)
        #expect(radio.channel == 6300)
        #expect(radio.band == "B20")
        #expect(radio.areaCode == 4660)
        #expect(radio.physicalCellID == nil)
        #expect(radio.rsrpDbm == nil)
        #expect(radio.rsrqDb == -7)
    }

    static let nrCell = MBIMModem.ServingNRCell(
        nci: 0x9_8765_4321, physicalCellID: 500, nrarfcn: 632_628, tac: 0x00_1234, rsrp: 66, sinr: 80)

    /// On 5G NR the NR serving cell (MBIMEx v3) gives the cell and the NR leg's signal.
    @Test func mbimNRServingCellOn5G() {
        var radio = RadioContext(source: "mbim")
        radio.accessTechnology = .nr5g
        MBIMModem.read(MBIMModem.ServingCells(nr: [Self.nrCell]), into: &radio)
        #expect(radio.cellID == 0x9_8765_4321)
        #expect(radio.physicalCellID == 500)
        #expect(radio.channel == 632_628)
        #expect(radio.areaCode == 0x1234)
        #expect(radio.ssRsrpDbm == -90)
        #expect(radio.ssSinrDb == 17)
        #expect(radio.rsrpDbm == nil)
    }

    /// On LTE with an NR leg (non-standalone): the LTE cell, the NR leg's SS-RSRP and SS-SINR.
    @Test func mbimLTEAnchorWithAnNRLeg() {
        var radio = RadioContext(source: "mbim")
        radio.accessTechnology = .lte
        let lte = MBIMModem.ServingLTECell(
            cellID: 0x777, earfcn: 1300, physicalCellID: 7, tac: 0x42, rsrp: -101, rsrq: -12)
        MBIMModem.read(MBIMModem.ServingCells(lte: lte, nr: [Self.nrCell]), into: &radio)
        #expect(radio.cellID == 0x777)
        #expect(radio.channel == 1300)
        #expect(radio.band == "B3")
        #expect(radio.rsrpDbm == -101)
        #expect(radio.ssRsrpDbm == -90)
        #expect(radio.ssSinrDb == 17)
    }

    /// On UMTS the UMTS serving cell: cell id, LAC, UARFCN; an unknown UARFCN absent.
    @Test func mbimUMTSServingCell() {
        var radio = RadioContext(source: "mbim")
        radio.accessTechnology = .umts
        MBIMModem.read(
            MBIMModem.ServingCells(umts: MBIMModem.ServingUMTSCell(cellID: 0xBEEF, lac: 0x0A0B, uarfcn: .max)),
            into: &radio)
        #expect(radio.cellID == 0xBEEF)
        #expect(radio.areaCode == 0x0A0B)
        #expect(radio.channel == nil)
    }

    @Test func qmiBandNames() {
        #expect(QMIModem.bandName(QMI_NAS_ACTIVE_BAND_EUTRAN_3) == "B3")
        #expect(QMIModem.bandName(QMI_NAS_ACTIVE_BAND_EUTRAN_20) == "B20")
        #expect(QMIModem.bandName(QMI_NAS_ACTIVE_BAND_NR5G_78) == "n78")
        #expect(QMIModem.bandName(QMI_NAS_ACTIVE_BAND_WCDMA_2100) == "wcdma-2100")
        #expect(QMIModem.radioInterface(.nr5g) == QMI_NAS_RADIO_INTERFACE_5GNR)
        #expect(QMIModem.radioInterface(.other) == nil)
    }
}
