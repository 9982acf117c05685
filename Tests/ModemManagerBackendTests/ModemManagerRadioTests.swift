import CellpathCore
import Testing

@testable import ModemManagerBackend

/// How ModemManager's cell info and signal values become the radio context: cell identities as
/// hexadecimal text, unknown values (-G_MAXDOUBLE, G_MAXUINT) left out.
@Suite struct ModemManagerRadioTests {
    @Test func servingCellIdentitiesAreHexadecimal() {
        var radio = RadioContext(source: "modemmanager")
        ModemManagerModem.read(
            ModemManagerModem.ServingCell(areaCode: "1234", cellID: "1234567", physicalCellID: "D3", channel: 6300),
            into: &radio)
        #expect(radio.areaCode == 0x1234)
        #expect(radio.cellID == 0x0123_4567)
        #expect(radio.physicalCellID == 211)
        #expect(radio.channel == 6300)
    }

    @Test func unknownCellValuesStayAbsent() {
        var radio = RadioContext(source: "modemmanager")
        ModemManagerModem.read(
            ModemManagerModem.ServingCell(areaCode: nil, cellID: "not hex", physicalCellID: nil, channel: .max),
            into: &radio)
        #expect(radio == RadioContext(source: "modemmanager"))
    }

    @Test func signalSentinelsAreUnknown() {
        #expect(ModemManagerModem.known(-.greatestFiniteMagnitude) == nil)
        #expect(ModemManagerModem.known(-95) == -95)
        #expect(ModemManagerModem.known(13.5) == 13.5)
    }
}
