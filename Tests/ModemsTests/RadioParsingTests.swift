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
        MBIMModem.read(
            MBIMModem.ServingLTECell(
                cellID: 19_088_743, earfcn: 6300, physicalCellID: .max, tac: 4660, rsrp: Int32.max, rsrq: -7),
            into: &radio)
        #expect(radio.cellID == 19_088_743)
        #expect(radio.channel == 6300)
        #expect(radio.band == "B20")
        #expect(radio.areaCode == 4660)
        #expect(radio.physicalCellID == nil)
        #expect(radio.rsrpDbm == nil)
        #expect(radio.rsrqDb == -7)
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
