import FoundationEssentials
import Glibc
import ModemDiscovery
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// Grouping by physical device over fake sysfs trees in the kernel's shapes (USB, MHI default
/// link, mhi_net, t7xx, iosm, the L850, a router-mode modem, QMAP and VLAN uppers), and over the
/// simulated zoo's own tree. No root.
@Suite(.serialized) struct PhysicalDeviceTests {
    /// A sysfs tree under a temporary directory: attributes, devices with their `subsystem`, and
    /// class entries linking to them.
    final class Tree {
        let root: String

        init() throws {
            root = try TemporaryDirectory.make("cellpath-physical")
        }

        deinit { FileSystem.removeTree(root) }

        var discovery: ModemDiscovery { ModemDiscovery(roots: DeviceRoots(sysfs: root, dev: "/dev")) }

        func directory(_ path: String) {
            var current = root
            for part in path.split(separator: "/") {
                current += "/\(part)"
                mkdir(current, 0o755)
            }
        }

        func write(_ path: String, _ text: String) {
            directory(String(path.split(separator: "/").dropLast().joined(separator: "/")))
            _ = FileSystemText.write("\(root)/\(path)", text + "\n")
        }

        /// A symbolic link at `path` to `target` (relative to the root), written relative as sysfs has it.
        func link(_ path: String, to target: String) {
            let parts = path.split(separator: "/")
            directory(parts.dropLast().joined(separator: "/"))
            let up = String(repeating: "../", count: parts.count - 1)
            symlink(up + target, "\(root)/\(path)")
        }

        func usbDevice(_ path: String, vendor: String, product: String, name: String = "Modem") {
            write("\(path)/idVendor", vendor)
            write("\(path)/idProduct", product)
            write("\(path)/manufacturer", "Maker")
            write("\(path)/product", name)
            link("\(path)/subsystem", to: "bus/usb")
        }

        func usbInterface(_ path: String, driver: String) {
            write("\(path)/bInterfaceNumber", "00")
            link("\(path)/subsystem", to: "bus/usb")
            directory("bus/usb/drivers/\(driver)")
            link("\(path)/driver", to: "bus/usb/drivers/\(driver)")
        }

        func pciFunction(_ path: String, vendor: String, device: String, driver: String) {
            write("\(path)/vendor", "0x\(vendor)")
            write("\(path)/device", "0x\(device)")
            write("\(path)/class", "0x0d4000")
            link("\(path)/subsystem", to: "bus/pci")
            directory("bus/pci/drivers/\(driver)")
            link("\(path)/driver", to: "bus/pci/drivers/\(driver)")
        }

        func usbmiscPort(_ interface: String, _ name: String) {
            write("\(interface)/usbmisc/\(name)/dev", "180:0")
            link("class/usbmisc/\(name)", to: "\(interface)/usbmisc/\(name)")
        }

        /// The WWAN device `wwanN` under `parent`, with ports of the given types.
        func wwanDevice(_ parent: String, _ name: String, ports: [(String, String)]) {
            write("\(parent)/wwan/\(name)/uevent", "DEVTYPE=wwan_dev")
            link("class/wwan/\(name)", to: "\(parent)/wwan/\(name)")
            for (port, type) in ports {
                write("\(parent)/wwan/\(name)/\(port)/type", type)
                link("class/wwan/\(port)", to: "\(parent)/wwan/\(name)/\(port)")
            }
        }

        func net(_ parent: String, _ name: String) {
            write("\(parent)/net/\(name)/type", "65534")
            link("class/net/\(name)", to: "\(parent)/net/\(name)")
        }

        /// A virtual net device stacked on `lower` (qmimux, VLAN): `lower_*` on it, `upper_*` on the lower.
        func upper(_ name: String, on lower: String, lowerPath: String, upperLinkOnLower: Bool = true) {
            let path = "devices/virtual/net/\(name)"
            write("\(path)/type", "65534")
            link("class/net/\(name)", to: path)
            link("\(path)/lower_\(lower)", to: lowerPath)
            if upperLinkOnLower { link("\(lowerPath)/upper_\(name)", to: path) }
        }
    }

    static let pci = "devices/pci0000:00/0000:00:1c.0/0000:01:00.0"
    static let usbBus = "devices/pci0000:00/0000:00:14.0/usb1"

    /// A USB host controller's PCI function, above every USB device of these trees: the
    /// innermost USB device is the modem, never the controller.
    static func hostController(_ tree: Tree) {
        tree.pciFunction("devices/pci0000:00/0000:00:14.0", vendor: "8086", device: "a0ed", driver: "xhci_hcd")
        tree.usbDevice(usbBus, vendor: "1d6b", product: "0002", name: "xHCI Host Controller")
    }

    /// A tree with one USB MBIM modem (a Quectel EM12-G: cdc-wdm0 and wwan0) behind the host controller.
    static func usbMBIMModem() throws -> Tree {
        let tree = try Tree()
        hostController(tree)
        let device = "\(usbBus)/1-2", interface = "\(device)/1-2:1.0"
        tree.usbDevice(device, vendor: "2c7c", product: "0512", name: "EM12-G")
        tree.usbInterface(interface, driver: "cdc_mbim")
        tree.usbmiscPort(interface, "cdc-wdm0")
        tree.net(interface, "wwan0")
        return tree
    }

    @Test func aUSBModemIsItsUSBDeviceWithItsInterfaces() throws {
        let tree = try Self.usbMBIMModem()
        let found = tree.discovery.discover()
        try #require(found.modems.count == 1 && found.uncontrolled.isEmpty, "\(found)")
        let modem = found.modems[0]
        #expect(modem.devicePath.hasSuffix("/usb1/1-2"))
        #expect(modem.ports.map(\.name) == ["cdc-wdm0"] && modem.protocol == .mbim)
        #expect(modem.interfaces == ["wwan0"] && modem.links.isEmpty)
        #expect(modem.usbVendorID == "2c7c" && modem.usbProductID == "0512" && modem.model == "EM12-G")
        #expect(modem.pciVendorID == nil)
    }

    /// The one test of a simulated modem: found in a sysfs tree other than the host's `/sys`.
    @Test func aModemFoundOutsideTheHostsSysfsIsSimulated() throws {
        let tree = try Self.usbMBIMModem()
        let found = try #require(tree.discovery.discover().modems.first)
        #expect(found.isSimulated, "in \(tree.root)")
        func modem(at path: String) -> DiscoveredModem {
            DiscoveredModem(
                index: 0, devicePath: path,
                ports: [ControlPort(name: "cdc-wdm0", devicePath: "/dev/cdc-wdm0", protocol: .mbim)],
                interfaces: ["wwan0"])
        }
        #expect(!modem(at: "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2").isSimulated)
        #expect(modem(at: "/sysfake/devices/usb1/1-2").isSimulated)
    }

    /// Two modems on one bus stay two: grouped by USB device (`1-2`, `1-10`), ordered by it, digit
    /// runs as numbers.
    @Test func twoUSBModemsOnOneBusAreTwoModems() throws {
        let tree = try Tree()
        Self.hostController(tree)
        for (n, (port, driver)) in [(10, ("cdc-wdm0", "qmi_wwan")), (2, ("cdc-wdm1", "cdc_mbim"))] {
            let device = "\(Self.usbBus)/1-\(n)", interface = "\(device)/1-\(n):1.4"
            tree.usbDevice(device, vendor: "1199", product: "9071")
            tree.usbInterface(interface, driver: driver)
            tree.usbmiscPort(interface, port)
            tree.net(interface, "wwan\(port.last!)")
        }
        let modems = tree.discovery.modems()
        try #require(modems.count == 2, "\(modems)")
        #expect(modems.map(\.index) == [0, 1])
        #expect(modems[0].devicePath.hasSuffix("/1-2") && modems[0].ports.map(\.name) == ["cdc-wdm1"])
        #expect(modems[0].interfaces == ["wwan1"] && modems[0].protocol == .mbim)
        #expect(modems[1].devicePath.hasSuffix("/1-10") && modems[1].ports.map(\.name) == ["cdc-wdm0"])
        #expect(modems[1].interfaces == ["wwan0"] && modems[1].protocol == .qmi)
    }

    /// EM120R: `mhi0/wwan/wwan0/{wwan0mbim0, wwan0at0, net/wwan0}`: the PCI function is the modem.
    @Test func anMHIModemsDefaultLink() throws {
        let tree = try Tree()
        tree.pciFunction(Self.pci, vendor: "1eac", device: "1001", driver: "mhi-pci-generic")
        let mhi = "\(Self.pci)/mhi0"
        tree.write("\(mhi)/uevent", "")
        tree.link("\(mhi)/subsystem", to: "bus/mhi")
        tree.wwanDevice(mhi, "wwan0", ports: [("wwan0mbim0", "MBIM"), ("wwan0at0", "AT")])
        tree.net("\(mhi)/wwan/wwan0", "wwan0")

        let found = tree.discovery.discover()
        try #require(found.modems.count == 1 && found.uncontrolled.isEmpty, "\(found)")
        let modem = found.modems[0]
        #expect(modem.devicePath.hasSuffix("/0000:01:00.0"))
        #expect(modem.ports.map(\.name) == ["wwan0mbim0"] && modem.interfaces == ["wwan0"])
        #expect(modem.pciVendorID == "1eac" && modem.pciDeviceID == "1001" && modem.usbVendorID == nil)
        #expect(modem.manufacturer == "Quectel" && modem.model == "EM120R-GL")
    }

    /// RM520N: the ports under `mhi0/wwan/wwan0`, the net device under the channel device
    /// `mhi0/mhi0_IP_HW0`: both under the PCI function, so one modem with its interface.
    @Test func mhiNetsInterfaceUnderAChannelDevice() throws {
        let tree = try Tree()
        tree.pciFunction(Self.pci, vendor: "1eac", device: "1007", driver: "mhi-pci-generic")
        let mhi = "\(Self.pci)/mhi0"
        tree.link("\(mhi)/subsystem", to: "bus/mhi")
        tree.link("\(mhi)/mhi0_IP_HW0/subsystem", to: "bus/mhi")
        tree.directory("bus/mhi/drivers/mhi_net")
        tree.link("\(mhi)/mhi0_IP_HW0/driver", to: "bus/mhi/drivers/mhi_net")
        tree.wwanDevice(mhi, "wwan0", ports: [("wwan0qmi0", "QMI"), ("wwan0at0", "AT")])
        tree.net("\(mhi)/mhi0_IP_HW0", "mhi_hwip0")

        let modems = tree.discovery.modems()
        try #require(modems.count == 1, "\(modems)")
        #expect(modems[0].ports.map(\.name) == ["wwan0qmi0"] && modems[0].protocol == .qmi)
        #expect(modems[0].interfaces == ["mhi_hwip0"])
        #expect(tree.discovery.modem(withInterface: "mhi_hwip0")?.index == 0)
    }

    /// t7xx (FM350) and iosm (L860): the WWAN device directly under the PCI function.
    @Test func t7xxAndIOSMModems() throws {
        let shapes = [
            ("14c3", "4d75", "mtk_t7xx", [("wwan0mbim0", "MBIM"), ("wwan0at0", "AT")]),
            ("8086", "7560", "iosm", [("wwan0mbim0", "MBIM")])
        ]
        for (vendor, device, driver, ports) in shapes {
            let tree = try Tree()
            tree.pciFunction(Self.pci, vendor: vendor, device: device, driver: driver)
            tree.wwanDevice(Self.pci, "wwan0", ports: ports)
            tree.net("\(Self.pci)/wwan/wwan0", "wwan0")
            let found = tree.discovery.discover()
            try #require(found.modems.count == 1 && found.uncontrolled.isEmpty, "\(driver): \(found)")
            #expect(found.modems[0].ports.map(\.name) == ["wwan0mbim0"], "\(driver)")
            #expect(found.modems[0].interfaces == ["wwan0"] && found.modems[0].pciVendorID == vendor, "\(driver)")
        }
    }

    /// The L850: XMM RPC and AT ports only: found, unsupported, with the reason commands give.
    @Test func theL850IsUnsupportedWithItsReason() throws {
        let tree = try Tree()
        tree.pciFunction(Self.pci, vendor: "8086", device: "7360", driver: "iosm")
        tree.wwanDevice(Self.pci, "wwan0", ports: [("wwan0xmmrpc0", "XMMRPC"), ("wwan0at0", "AT")])

        let found = tree.discovery.discover()
        #expect(found.modems.isEmpty)
        try #require(found.uncontrolled.count == 1, "\(found)")
        let l850 = found.uncontrolled[0]
        #expect(l850.kind == .unsupported && l850.index == 0 && l850.bus == .pci)
        #expect(l850.ports == ["wwan0at0", "wwan0xmmrpc0"] && l850.portTypes == ["AT", "XMMRPC"])
        #expect(l850.interfaces.isEmpty)
        #expect(
            l850.reason == "Intel XMM7360 (8086:7360) exposes only XMM RPC and AT ports: cellpath needs an MBIM or "
                + "QMI port; see docs/operations.md")
    }

    /// A HiLink stick (12d1, cdc_ether, no control port) is a router-mode modem; a USB Ethernet
    /// adapter on the same driver (Realtek 0bda) is not a modem at all.
    @Test func aRouterModeModemAndAUSBEthernetAdapter() throws {
        let tree = try Tree()
        Self.hostController(tree)
        for (n, vendor, name) in [(4, "12d1", "usb0"), (5, "0bda", "eth1")] {
            let device = "\(Self.usbBus)/1-\(n)", interface = "\(device)/1-\(n):1.0"
            tree.usbDevice(device, vendor: vendor, product: "14dc", name: n == 4 ? "HUAWEI_MOBILE" : "USB Ethernet")
            tree.usbInterface(interface, driver: "cdc_ether")
            tree.net(interface, name)
        }
        let found = tree.discovery.discover()
        #expect(found.modems.isEmpty)
        try #require(found.uncontrolled.count == 1, "\(found)")
        let router = found.uncontrolled[0]
        #expect(router.kind == .router && router.interfaces == ["usb0"] && router.driver == "cdc_ether")
        #expect(router.vendorID == "12d1" && router.productID == "14dc" && router.ports.isEmpty)
        #expect(router.reason.contains("router mode") && router.reason.contains("--interface usb0"))
        #expect(found.isCellularInterface("usb0") && !found.isCellularInterface("eth1"))
    }

    /// qmi_wwan's QMAP mux `qmimux0` (`lower_wwan0`, `upper_qmimux0`) and a VLAN `wwan0.1` with only
    /// its `lower_` link: data links of the modem; the master stays its interface.
    @Test func muxAndVLANUppersAreTheModemsLinks() throws {
        let tree = try Tree()
        Self.hostController(tree)
        let device = "\(Self.usbBus)/1-2", interface = "\(device)/1-2:1.4"
        tree.usbDevice(device, vendor: "2c7c", product: "0800")
        tree.usbInterface(interface, driver: "qmi_wwan")
        tree.usbmiscPort(interface, "cdc-wdm0")
        tree.net(interface, "wwan0")
        tree.upper("qmimux0", on: "wwan0", lowerPath: "\(interface)/net/wwan0")
        tree.upper("wwan0.1", on: "wwan0", lowerPath: "\(interface)/net/wwan0", upperLinkOnLower: false)
        tree.upper("wlan0.5", on: "wlan0", lowerPath: "devices/pci0000:00/0000:02:00.0/net/wlan0")

        let found = tree.discovery.discover()
        try #require(found.modems.count == 1, "\(found)")
        #expect(found.modems[0].interfaces == ["wwan0"])
        #expect(found.modems[0].links == ["qmimux0", "wwan0.1"])
        #expect(found.isCellularInterface("qmimux0") && found.isCellularInterface("wwan0.1"))
        #expect(!found.isCellularInterface("wlan0.5"))
    }

    /// USB devices first, then PCI functions; indices run across the modems cellpath drives and
    /// those it cannot.
    @Test func orderIsByBusThenPathAcrossEveryKind() throws {
        let tree = try Tree()
        Self.hostController(tree)
        tree.pciFunction(Self.pci, vendor: "8086", device: "7360", driver: "iosm")
        tree.wwanDevice(Self.pci, "wwan0", ports: [("wwan0xmmrpc0", "XMMRPC")])
        let pcie = "devices/pci0000:00/0000:00:1d.0/0000:02:00.0"
        tree.pciFunction(pcie, vendor: "14c3", device: "4d75", driver: "mtk_t7xx")
        tree.wwanDevice(pcie, "wwan1", ports: [("wwan1mbim0", "MBIM")])
        let router = "\(Self.usbBus)/1-3"
        tree.usbDevice(router, vendor: "19d2", product: "1405")
        tree.usbInterface("\(router)/1-3:1.0", driver: "rndis_host")
        tree.net("\(router)/1-3:1.0", "usb0")
        let usb = "\(Self.usbBus)/1-7"
        tree.usbDevice(usb, vendor: "1199", product: "9079")
        tree.usbInterface("\(usb)/1-7:1.12", driver: "cdc_mbim")
        tree.usbmiscPort("\(usb)/1-7:1.12", "cdc-wdm0")

        let found = tree.discovery.discover()
        #expect(found.uncontrolled.map(\.index) == [0, 2] && found.uncontrolled.map(\.kind) == [.router, .unsupported])
        #expect(found.modems.map(\.index) == [1, 3])
        #expect(found.modems.map { $0.ports[0].name } == ["cdc-wdm0", "wwan1mbim0"])
        #expect(found.uncontrolled[1].reason.hasPrefix("Intel XMM7360 (8086:7360) exposes only XMM RPC ports"))
    }

    /// The zoo scenario's tree as `cellpath sim` builds it, in process: every profile's modem where
    /// it belongs (the RM520N with `mhi_hwip7`), the L850 unsupported, the HiLink in router mode.
    @Test func theZoosTree() throws {
        let run = try TemporaryDirectory.make("cellpath-discovery")
        defer { FileSystem.removeTree(run) }
        let scenario = try Scenario.load(path: Repository.root + "/scripts/zoo-scenario.json")
        let fleet = SimulatedModemFleet(scenario: scenario, runDirectory: run, bearerNetwork: StaticBearerNetwork())
        try fleet.start()
        defer { fleet.stop() }

        let found = ModemDiscovery(roots: DeviceRoots(sysfs: "\(run)/sys", dev: "\(run)/dev")).discover()
        #expect(found.modems.count + found.uncontrolled.count == scenario.modems.count)
        for (n, modem) in scenario.modems.enumerated() {
            let profile = modem.profile, name = modem.device.rawValue
            if let control = profile.controlDevice(index: n) {
                let listed = try #require(
                    found.modems.first { $0.ports.contains { $0.name == control.name } },
                    "\(name)")
                #expect(listed.interfaces == [profile.netDeviceName(index: n)].compactMap { $0 }, "\(name)")
                #expect(listed.protocol.rawValue == control.type.lowercased(), "\(name)")
            } else {
                let listed = try #require(
                    found.uncontrolled.first {
                        $0.devicePath.hasSuffix(
                            profile.bus == .usb
                                ? "/1-\(n + 1)" : "/0000:\(String(format2: n + 1)):00.0")
                    }, "\(name)")
                #expect(listed.kind == (profile.bus == .usb ? .router : .unsupported), "\(name)")
                #expect(listed.interfaces == [profile.netDeviceName(index: n)].compactMap { $0 }, "\(name)")
            }
        }
        let indices = (found.modems.map(\.index) + found.uncontrolled.map(\.index)).sorted()
        #expect(indices == Array(0 ..< scenario.modems.count))
        // USB devices by number (1-1 … 1-13), then PCI functions by address (07, 08, 09, 0a, 0b).
        let paths =
            (found.modems.map { ($0.index, $0.devicePath) }
            + found.uncontrolled.map { ($0.index, $0.devicePath) })
            .sorted { $0.0 < $1.0 }.map { String($0.1.split(separator: "/").last!) }
        #expect(
            paths == [
                "1-1", "1-2", "1-3", "1-4", "1-5", "1-6", "1-12", "1-13", "0000:07:00.0", "0000:08:00.0",
                "0000:09:00.0", "0000:0a:00.0", "0000:0b:00.0"
            ])
    }
}

private extension String {
    /// Two lower-case hex digits, as PCI bus numbers are written.
    init(format2 value: Int) {
        let hex = String(value, radix: 16)
        self = hex.count < 2 ? "0" + hex : hex
    }
}

/// Writes test files without a shell.
enum FileSystemText {
    static func write(_ path: String, _ text: String) -> Bool {
        guard let file = fopen(path, "w") else { return false }
        defer { fclose(file) }
        return fputs(text, file) >= 0
    }
}
