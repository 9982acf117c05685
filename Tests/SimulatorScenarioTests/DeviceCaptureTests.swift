import CellpathCore
import SimulatorScenario
import Testing

/// Device captures without root: every profile written as a capture and read back rebuilds the
/// same shape, a captured modem survives the scenario file the daemon reads, captured SIM slots
/// and QMAP rebuild the modem's, a format 2 capture is still read, and a capture that cannot be
/// rebuilt is refused naming what it lacks.
@Suite struct DeviceCaptureTests {
    static let profiles = [DeviceProfile.simulated(.mbim), .simulated(.qmi)] + DeviceProfile.zoo

    @Test(arguments: profiles.indices)
    func aProfileWrittenAsACaptureRebuildsTheSameShape(_ index: Int) throws {
        let profile = Self.profiles[index]
        let modems = try DeviceCapture.decode(DeviceCapture.encoded(profile), source: "capture.json")
        let modem = try #require(modems.first)
        #expect(modems.count == 1)
        #expect(modem.shape.unreadFields.isEmpty, "\(modem.shape.unreadFields)")
        #expect(modem.shape == DeviceShape(profile: profile))
        let rebuilt = modem.profile
        #expect(rebuilt.name == .captured)
        #expect(DeviceShape(profile: rebuilt) == DeviceShape(profile: profile))
        // The idealised modem has no session links; rebuilt, its cdc_mbim has VLANs as a real one.
        #expect(
            rebuilt.sessionLinks
                == (profile.name == .simulated && profile.driver == "cdc_mbim" ? .vlan : profile.sessionLinks),
            "\(profile.name)")
        #expect(rebuilt.netDeviceName(index: 3) == profile.netDeviceName(index: 3))
        if profile.name != .simulated || profile.controlProtocol == .qmi {
            #expect(rebuilt.ports(index: 3) == profile.ports(index: 3))
        }
    }

    @Test func aCapturedModemSurvivesTheScenarioFileTheDaemonReads() throws {
        let fn990 = DeviceProfile.named(.usbMBIMv3)
        let ec25 = DeviceProfile.named(.usbQMIRawIP)
        let scenario = try Scenario().adding(captured: [fn990, ec25], replacingModems: false)
        let read = try Scenario.decode(scenario.encoded())
        #expect(read.modems.count == 3)
        #expect(read.modems.map(\.device) == [.simulated, .captured, .captured])
        #expect(read.modems[1].profile == scenario.modems[1].profile)
        #expect(DeviceShape(profile: read.modems[1].profile) == DeviceShape(profile: fn990))
        #expect(read.modems[2].protocol == .qmi && read.modems[2].model == "EC25")
        #expect(read.modems[1].imei != read.modems[2].imei, "each modem gets the identities of its index")
        let alone = try Scenario().adding(captured: [.named(.dualSIM)], replacingModems: true)
        #expect(alone.modems.count == 1 && alone.modems[0].secondSlot != nil)
    }

    @Test func capturedSIMSlotsAndQMAPRebuildTheReplayedModem() throws {
        let text = #"""
            {"format": 3, "modems": [{"shape": {"bus": "usb", "vendor_id": "2c7c", "product_id": "0620",
             "driver": "cdc_mbim", "protocol": "mbim", "control_port": "cdc-wdm", "net_device": "usb-wwan",
             "mbim_extensions": 3, "sim_slots": [{"slot": 1, "content": "sim", "active": false},
             {"slot": 2, "content": "empty", "active": true}]}},
             {"shape": {"bus": "usb", "vendor_id": "2c7c", "product_id": "0800", "driver": "qmi_wwan",
             "protocol": "qmi", "control_port": "cdc-wdm", "net_device": "usb-wwan", "qmi_data_aggregation": true,
             "mux_links": 1, "qmi_dms_uim_refused": true, "sim_slots": []}}]}
            """#
        let modems = try DeviceCapture.decode(Array(text.utf8), source: "slots.json")
        #expect(modems[0].profile.slots == 2 && modems[0].profile.mbimExtensions == .v3)
        #expect(modems[1].profile.qmi.qmap && modems[1].profile.qmi.dmsUIMRefused)
        #expect(modems[1].profile.sessionLinks == .qmimux)
        let scenario = try Scenario().adding(captured: modems, replacingModems: true)
        #expect(scenario.modems[0].activeSlot == 2 && scenario.modems[0].sim != nil)
        #expect(scenario.modems[0].secondSlot == SecondSIMSlot(esim: false, sim: nil))
        #expect(scenario.modems[1].secondSlot == nil && scenario.modems[1].activeSlot == 1)
        // Written by a cellpath of format 2 (without the slots' states): read, one slot.
        let old = #"""
            {"format": 2, "modems": [{"shape": {"bus": "usb", "vendor_id": "2c7c", "product_id": "0125",
             "driver": "qmi_wwan", "protocol": "qmi", "control_port": "cdc-wdm", "net_device": "usb-wwan",
             "slots": null}}]}
            """#
        #expect(try DeviceCapture.decode(Array(old.utf8), source: "old.json").first?.profile.slots == 1)
        let twoActive = text.replacing(
            #""content": "sim", "active": false"#, with: #""content": "sim", "active": true"#)
        #expect(throws: CellpathError.self) { try DeviceCapture.decode(Array(twoActive.utf8), source: "x.json") }
    }

    @Test func aCaptureThatCannotBeRebuiltIsRefusedNamingWhatItLacks() throws {
        func refusal(_ text: String) -> String {
            do {
                _ = try DeviceCapture.decode(Array(text.utf8), source: "dev.json")
                return "accepted"
            } catch let error as CellpathError {
                #expect(error.kind == .dataError)
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(#"{"cellpath": "1.0", "modems": []}"#).contains("format: missing: a capture of an older"))
        #expect(refusal(#"{"format": 2, "modems": [{"index": 0, "report": {}}]}"#).contains("modems[0].shape: missing"))
        let noDriver =
            #"{"format": 2, "modems": [{"shape": {"bus": "usb", "vendor_id": "2c7c", "product_id": "0125"}}]}"#
        #expect(refusal(noDriver).contains("modems[0].shape.driver: missing: the capture lacks the driver"))
        let pcieCDC = #"""
            {"format": 2, "modems": [{"shape": {"bus": "pcie", "vendor_id": "0x1eac", "product_id": "1001",
             "subsystem_vendor_id": "1eac", "subsystem_device_id": "2001", "driver": "x", "protocol": "mbim",
             "control_port": "cdc-wdm", "net_device": "usb-wwan"}}]}
            """#
        #expect(
            refusal(pcieCDC).contains("modems[0].shape.control_port: a cdc-wdm port or a USB net device needs bus usb"))
        #expect(refusal(#"{"format": 2, "modems": []}"#).contains("modems: the capture has no modem"))
    }
}
