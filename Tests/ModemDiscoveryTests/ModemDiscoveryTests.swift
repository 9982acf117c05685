import Glibc
import ModemDiscovery
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// Discovery from sysfs: the simulated fleet's tree (what `cellpath sim` makes) and a PCIe
/// modem's layout built by hand. No root.
@Suite(.serialized, .ownThreads) struct ModemDiscoveryTests {
    @Test func anMBIMAndAQMIModemOfTheSimulatedFleet() throws {
        let run = try TemporaryDirectory.make("cellpath-discovery")
        defer { FileSystem.removeTree(run) }
        let fleet = SimulatedModemFleet(
            scenario: Scenario(modems: [SimulatedModem(protocol: .mbim), SimulatedModem(protocol: .qmi)]),
            runDirectory: run, bearerNetwork: StaticBearerNetwork())
        try fleet.start()
        defer { fleet.stop() }

        let discovery = ModemDiscovery(roots: DeviceRoots(sysfs: "\(run)/sys", dev: "\(run)/dev"))
        let modems = discovery.modems()
        try #require(modems.count == 2, "\(modems)")
        // The MBIM modem shows as cdc-wdm0 and as the WWAN port wwan0mbim0: one modem.
        #expect(modems[0].index == 0 && modems[0].protocol == .mbim)
        #expect(modems[0].ports.map(\.name) == ["cdc-wdm0", "wwan0mbim0"])
        #expect(modems[0].ports[0].devicePath == "\(run)/dev/cdc-wdm0")
        #expect(modems[0].interfaces == ["wwan0"])
        #expect(modems[1].index == 1 && modems[1].protocol == .qmi && modems[1].ports.map(\.name) == ["cdc-wdm1"])
        #expect(modems[1].interfaces == ["wwan1"])
        #expect(
            modems[0].usbVendorID == "1199" && modems[1].usbVendorID == "1199" && modems[1].usbProductID == "68c0"
                && modems[0].model != nil)
        #expect(discovery.modem(withInterface: "wwan1")?.index == 1)
        for other in ["wlan0", "eth0", "lo", "nonexistent0"] { #expect(discovery.modem(withInterface: other) == nil) }
    }

    @Test func theRealMachinesRootsAreTheDefault() {
        #expect(DeviceRoots(environment: [:]) == DeviceRoots(sysfs: "/sys", dev: "/dev"))
        #expect(
            DeviceRoots(environment: ["CELLPATH_SYSFS_ROOT": "/r/sys", "CELLPATH_DEV_ROOT": "/r/dev"])
                == DeviceRoots(sysfs: "/r/sys", dev: "/r/dev"))
    }

    /// A PCIe modem as the kernel's WWAN subsystem shows it: `wwan0` (the WWAN device, no type),
    /// its MBIM, QMI-less AT and firehose ports, and its network interface; plus a Wi-Fi card
    /// and a USB modem bound to another driver.
    @Test func aPCIeModemsWWANPortsAndNothingElse() throws {
        let root = try TemporaryDirectory.make("cellpath-discovery")
        defer { FileSystem.removeTree(root) }
        let pci = "devices/pci0000:00/0000:00:1c.0/0000:01:00.0"
        func write(_ path: String, _ text: String) throws {
            _ = try ProcessRunner.run([
                "mkdir", "-p", String(path.split(separator: "/").dropLast().joined(separator: "/")).withRoot(root)
            ])
            _ = try ProcessRunner.run(["sh", "-c", "printf '%s\\n' \"$1\" > \"$2\"", "sh", text, "\(root)/\(path)"])
        }
        func link(_ path: String, _ target: String) throws {
            _ = try ProcessRunner.run([
                "mkdir", "-p", String(path.split(separator: "/").dropLast().joined(separator: "/")).withRoot(root)
            ])
            _ = try ProcessRunner.run(["ln", "-s", target, "\(root)/\(path)"])
        }
        try write("\(pci)/wwan/wwan0/uevent", "DEVTYPE=wwan_dev")
        try link("class/wwan/wwan0", "../../\(pci)/wwan/wwan0")
        for (port, type) in [("wwan0mbim0", "MBIM"), ("wwan0at0", "AT"), ("wwan0firehose0", "FIREHOSE")] {
            try write("\(pci)/wwan/wwan0/\(port)/type", type)
            try link("class/wwan/\(port)", "../../\(pci)/wwan/wwan0/\(port)")
        }
        try write("\(pci)/wwan/wwan0/net/wwan0/type", "65534")
        try link("class/net/wwan0", "../../\(pci)/wwan/wwan0/net/wwan0")
        try write("devices/pci0000:00/0000:02:00.0/net/wlp2s0/type", "1")
        try link("class/net/wlp2s0", "../../devices/pci0000:00/0000:02:00.0/net/wlp2s0")
        let usb = "devices/pci0000:00/usb1/1-2/1-2:1.3"
        try write("\(usb)/usbmisc/cdc-wdm3/dev", "180:3")
        try link("class/usbmisc/cdc-wdm3", "../../\(usb)/usbmisc/cdc-wdm3")
        try write("bus/usb/drivers/cdc_wdm/uevent", "")
        try link("\(usb)/driver", "../../../../../bus/usb/drivers/cdc_wdm")

        let modems = ModemDiscovery(roots: DeviceRoots(sysfs: root, dev: "/dev")).modems()
        #expect(modems.count == 1, "\(modems)")
        #expect(
            modems.first?.ports == [ControlPort(name: "wwan0mbim0", devicePath: "/dev/wwan0mbim0", protocol: .mbim)])
        #expect(modems.first?.interfaces == ["wwan0"] && modems.first?.usbVendorID == nil)
    }
}

private extension String {
    func withRoot(_ root: String) -> String { "\(root)/\(self)" }
}
