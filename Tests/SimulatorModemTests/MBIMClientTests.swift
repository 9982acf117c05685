import Simulator
import Testing
import TestSupport

@Suite("MBIM modem checked by mbimcli", .serialized)
struct MBIMClientTests {
    @Test func deviceCaps() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim, imei: "358812345678905", firmware: "FW.2.3"))
        let r = try h.mbimcli("--query-device-caps")
        #expect(r.status == 0, "\(r.stderr)")
        print(r.stdout, r.stderr)
        #expect(field("Device ID", in: r.stdout) == "358812345678905")
        #expect(field("Firmware info", in: r.stdout) == "FW.2.3")
    }
}
