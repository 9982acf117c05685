import CModemManager
import Testing

@testable import ModemManagerBackend

/// Which of ModemManager's bearers cellpath takes for Internet data on a modem with several
/// (multiplexed PDNs: an IMS bearer beside the Internet one).
@Suite struct ModemManagerBearerChoiceTests {
    private typealias Kind = ModemManagerModem.BearerKind
    private static let none = MM_BEARER_APN_TYPE_NONE.rawValue
    private static let ims = MM_BEARER_APN_TYPE_IMS.rawValue
    private static let mms = MM_BEARER_APN_TYPE_MMS.rawValue
    private static let internet = MM_BEARER_APN_TYPE_DEFAULT.rawValue | MM_BEARER_APN_TYPE_INITIAL.rawValue

    @Test func theInternetBearerIsTakenOverAnIMSBearerConnectedFirst() {
        let bearers = [Kind(connected: true, apnType: Self.ims), Kind(connected: true, apnType: Self.internet)]
        #expect(ModemManagerModem.dataBearer(among: bearers) == 1)
    }

    @Test func aBearerWithoutPurposeIsTheDefaultOne() {
        let bearers = [Kind(connected: true, apnType: Self.mms), Kind(connected: true, apnType: Self.none)]
        #expect(ModemManagerModem.dataBearer(among: bearers) == 1)
        #expect(ModemManagerModem.dataBearer(among: [Kind(connected: true, apnType: Self.none)]) == 0)
    }

    @Test func aDefaultBearerComesBeforeOneWithoutPurpose() {
        let bearers = [Kind(connected: true, apnType: Self.none), Kind(connected: true, apnType: Self.internet)]
        #expect(ModemManagerModem.dataBearer(among: bearers) == 1)
    }

    @Test func onlyAnIMSBearerConnectedIsNoDataBearer() {
        let bearers = [Kind(connected: true, apnType: Self.ims), Kind(connected: false, apnType: Self.none)]
        #expect(ModemManagerModem.dataBearer(among: bearers) == nil)
    }

    @Test func aDisconnectedInternetBearerIsNotConnectedData() {
        #expect(ModemManagerModem.dataBearer(among: [Kind(connected: false, apnType: Self.internet)]) == nil)
        #expect(ModemManagerModem.dataBearer(among: []) == nil)
    }
}
