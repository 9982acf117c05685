import CellpathCore

/// What the kernel and the firmware present for one real model of modem: the bus and ids, the
/// drivers, the control and data ports and their names, the protocol and its extensions, and the
/// firmware's quirks. A scenario modem names one (`modems[i].device`); the default, `simulated`,
/// is the idealised shape every scenario had before profiles existed. The sources of each
/// profile's facts are in docs/simulator-modems.md ("Device zoo").
public struct DeviceProfile: Sendable, Equatable {
    /// The profile's name in scenarios and `cellpath sim profiles`.
    public let name: Name
    /// The real models this profile stands for, for people.
    public let models: String
    /// What the firmware reports as manufacturer and model (a scenario modem's defaults).
    public let manufacturer: String
    public let model: String
    public let bus: Bus
    /// USB VID:PID or PCI vendor:device.
    public let vendorID: UInt16
    public let productID: UInt16
    /// PCI subsystem vendor:device (PCIe modules only).
    public let subsystemIDs: (vendor: UInt16, device: UInt16)?
    /// The kernel driver bound to the function that carries the control port (`cdc_mbim`,
    /// `qmi_wwan`, `mhi-pci-generic`, `mtk_t7xx`, `iosm`, `cdc_ether`).
    public let driver: String
    /// The protocol on the control port; nil when the device has no MBIM or QMI port (router
    /// mode, or only vendor ports as the Intel L850).
    public let controlProtocol: ModemProtocol?
    /// How the control port is exposed.
    public let controlPort: ControlPortKind
    /// Further ports beside the control port (`AT`, `XMMRPC`), by their sysfs `type`: WWAN-class
    /// ports on PCIe, a USB serial (`option`) AT port on USB.
    public let extraPorts: [String]
    /// How the data net device is exposed and named.
    public let netDevice: NetDeviceKind
    /// The newest MBIM extension the firmware negotiates through MBIM Version (MBIM only).
    public let mbimExtensions: MBIMExtensions
    /// Radio-on is refused until the host unlocks it (FCC lock).
    public let fccLocked: Bool
    /// How the host unlocks the FCC lock, when `fccLocked`.
    public let fccUnlock: FCCUnlock?
    /// QMI firmware quirks (QMI only).
    public let qmi: QMIQuirks
    /// IP Configuration reports a link-local IPv6 address; the global one comes by router
    /// advertisement after connect (t7xx firmware).
    public let ipv6LinkLocalOnly: Bool
    /// How sessions above 0 get a net device.
    public let sessionLinks: SessionLinks
    /// SIM slots: 1, or 2 for a dual-SIM / eSIM modem (slot 2 is then the eSIM).
    public let slots: Int
    /// The USB interface number of the function the driver binds (`1-1:1.N`), as the real
    /// composition has it: Sierra's MBIM on 12 and QMI on 8, Quectel's QMI on 4; 0 elsewhere.
    public private(set) var usbInterfaceNumber = 0

    public enum Name: String, Sendable, CaseIterable, Codable {
        case simulated
        /// A shape rebuilt from a device capture (`sim up --device-capture`), not from the catalogue.
        case captured
        case usbMBIMv1 = "quectel-em12-mbim"
        case usbMBIMv3 = "telit-fn990-mbimex-v3"
        case usbMBIMFCCLocked = "sierra-em7455-fcc-locked"
        case usbQMIRawIP = "quectel-ec25-qmi"
        case usbQMIUIMOnly = "sierra-mc7455-qmi-uim"
        case usbQMIQMAP = "quectel-rm500q-qmap"
        case pcieMHIMBIM = "quectel-em120r-mhi"
        case pcieMHINet = "quectel-rm520n-mhi-net"
        case pcieT7xx = "fibocom-fm350-t7xx"
        case pcieIOSM = "intel-l860-iosm"
        case pcieIOSMUnsupported = "intel-l850-xmm"
        case routerMode = "huawei-e3372h-hilink"
        case dualSIM = "quectel-em160r-dual-sim"

        /// The names a scenario's `device` may give: every one but `captured`, which a modem gets
        /// from a device capture.
        public static let allCases: [Name] = [
            .simulated, .usbMBIMv1, .usbMBIMv3, .usbMBIMFCCLocked, .usbQMIRawIP, .usbQMIUIMOnly, .usbQMIQMAP,
            .pcieMHIMBIM, .pcieMHINet, .pcieT7xx, .pcieIOSM, .pcieIOSMUnsupported, .routerMode, .dualSIM
        ]
    }

    public enum Bus: String, Sendable, CaseIterable { case usb, pcie }

    public enum ControlPortKind: Sendable, Equatable {
        /// `usbmisc/cdc-wdmN` under a USB interface (cdc_mbim, qmi_wwan).
        case cdcWDM
        /// A WWAN-class port `wwanN<kind>0` with sysfs `type` MBIM or QMI (MHI, t7xx, iosm).
        case wwanPort
        /// No MBIM or QMI port.
        case none
    }

    public enum NetDeviceKind: Sendable, Equatable {
        /// `wwanN` under the USB interface (cdc_mbim, qmi_wwan).
        case usbWWAN
        /// The WWAN framework's default link `wwanN`, under the `wwanN` WWAN device.
        case wwanDefaultLink
        /// mhi_net's `mhi_hwipN` under the channel device `mhiN/mhiN_IP_HW0`, not under the WWAN device.
        case mhiNet
        /// A USB Ethernet device of a router-mode modem (`usbN`, driver cdc_ether); the modem does DHCP and NAT.
        case usbEthernet
        /// No net device (the L850's vendor ports only).
        case none
    }

    public enum MBIMExtensions: Int, Sendable, Comparable {
        /// MBIM 1.0 only: MBIM Version is not answered.
        case none = 0, v2 = 2, v3 = 3
        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    public enum FCCUnlock: String, Sendable, CaseIterable {
        /// DMS Set FCC Authentication, QMI over MBIM (Sierra EM7455's fcc-unlock.d script).
        case qmiOverMBIM = "qmi-over-mbim"
        /// An AT command on the AT port (Fibocom FM350's script).
        case atPort = "at-port"
        /// Intel's vendor MBIM service (iosm modules' script).
        case vendorMBIM = "vendor-mbim"
    }

    public struct QMIQuirks: Sendable, Equatable {
        /// The firmware's default link-layer protocol (WDA Get Data Format): raw-ip, or 802.3.
        public var firmwareRawIP = true
        /// The kernel's `qmi/raw_ip` when the device appears (qmi_wwan's default is N).
        public var kernelRawIP = true
        /// DMS UIM commands (Get PIN Status, Get ICCID, Get IMSI, Verify PIN) answer
        /// InvalidQmiCommand; the SIM is read through the UIM service.
        public var dmsUIMRefused = false
        /// Sessions are multiplexed with QMAP: `qmimuxN` devices added through `qmi/add_mux`,
        /// WDS Bind Mux Data Port per session.
        public var qmap = false
        /// The firmware can send 802.3 frames: WDA Set Data Format to 802-3 takes effect. 5G
        /// firmware sends raw IP only, and keeps it (its answer says raw-ip).
        public var ethernetFraming = true
        public init(
            firmwareRawIP: Bool = true, kernelRawIP: Bool = true, dmsUIMRefused: Bool = false, qmap: Bool = false,
            ethernetFraming: Bool = true
        ) {
            self.firmwareRawIP = firmwareRawIP
            self.kernelRawIP = kernelRawIP
            self.dmsUIMRefused = dmsUIMRefused
            self.qmap = qmap
            self.ethernetFraming = ethernetFraming
        }
    }

    public enum SessionLinks: Sendable, Equatable {
        /// Session 0 only.
        case none
        /// cdc_mbim: VLAN `wwanN.S` over the net device.
        case vlan
        /// The WWAN framework: `ip link add … type wwan linkid S` (a kernel with WWAN support).
        case wwanLink
        /// qmi_wwan QMAP: `qmimuxN` through `qmi/add_mux`.
        case qmimux
    }

    /// Same name and same shape (a captured profile is equal to another of the same shape).
    public static func == (a: DeviceProfile, b: DeviceProfile) -> Bool {
        a.name == b.name && DeviceShape(profile: a) == DeviceShape(profile: b)
    }
}

extension DeviceProfile {
    /// A USB or PCI id as sysfs and lsusb write it: four lowercase hex digits.
    public static func hex4(_ value: UInt16) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 4 - text.count) + text
    }

    /// The profile of `name`.
    public static func named(_ name: Name) -> DeviceProfile {
        catalogue.first { $0.name == name }!
    }

    /// The idealised shape of `protocol`, as every scenario had before profiles: a USB interface
    /// with `cdc-wdmN` and `wwanN`, raw-ip on both sides, every old command answered, one SIM.
    public static func simulated(_ protocol: ModemProtocol) -> DeviceProfile {
        DeviceProfile(
            name: .simulated, models: "cellpath's idealised modem", manufacturer: "cellpath",
            model: "Simulated LTE modem", bus: .usb,
            vendorID: 0x1199, productID: `protocol` == .mbim ? 0x9079 : 0x68c0, subsystemIDs: nil,
            driver: `protocol` == .mbim ? "cdc_mbim" : "qmi_wwan", controlProtocol: `protocol`,
            controlPort: .cdcWDM, extraPorts: [], netDevice: .usbWWAN, mbimExtensions: .none,
            fccLocked: false, fccUnlock: nil, qmi: QMIQuirks(), ipv6LinkLocalOnly: false,
            sessionLinks: .none, slots: 1)
    }

    /// Every profile but `simulated`, in the order of docs/simulator-modems.md's zoo table.
    public static let zoo: [DeviceProfile] = catalogue.filter { $0.name != .simulated }

    private static let catalogue: [DeviceProfile] = [
        simulated(.mbim),
        DeviceProfile(
            name: .usbMBIMv1, models: "Quectel EM12-G / EM120 in MBIM mode (USB)", manufacturer: "Quectel",
            model: "EM12-G", bus: .usb,
            vendorID: 0x2c7c, productID: 0x0512, subsystemIDs: nil, driver: "cdc_mbim",
            controlProtocol: .mbim, controlPort: .cdcWDM, extraPorts: [], netDevice: .usbWWAN,
            mbimExtensions: .none, fccLocked: false, fccUnlock: nil, qmi: QMIQuirks(),
            ipv6LinkLocalOnly: false, sessionLinks: .vlan, slots: 1),
        DeviceProfile(
            name: .usbMBIMv3, models: "Telit FN990 (USB, MBIMEx 3.0)", manufacturer: "Telit", model: "FN990A28",
            bus: .usb,
            vendorID: 0x1bc7, productID: 0x1071, subsystemIDs: nil, driver: "cdc_mbim",
            controlProtocol: .mbim, controlPort: .cdcWDM, extraPorts: [], netDevice: .usbWWAN,
            mbimExtensions: .v3, fccLocked: false, fccUnlock: nil, qmi: QMIQuirks(),
            ipv6LinkLocalOnly: false, sessionLinks: .vlan, slots: 1),
        DeviceProfile(
            name: .usbMBIMFCCLocked, models: "Sierra Wireless EM7455 / Lenovo-branded (1199:9079)",
            manufacturer: "Sierra Wireless, Incorporated", model: "EM7455", bus: .usb,
            vendorID: 0x1199, productID: 0x9079, subsystemIDs: nil, driver: "cdc_mbim",
            controlProtocol: .mbim, controlPort: .cdcWDM, extraPorts: [], netDevice: .usbWWAN,
            mbimExtensions: .none, fccLocked: true, fccUnlock: .qmiOverMBIM, qmi: QMIQuirks(),
            ipv6LinkLocalOnly: false, sessionLinks: .vlan, slots: 1, usbInterfaceNumber: 12),
        DeviceProfile(
            name: .usbQMIRawIP, models: "Quectel EC25 / EG25 (USB, QMI)", manufacturer: "Quectel", model: "EC25",
            bus: .usb,
            vendorID: 0x2c7c, productID: 0x0125, subsystemIDs: nil, driver: "qmi_wwan",
            controlProtocol: .qmi, controlPort: .cdcWDM, extraPorts: ["AT"], netDevice: .usbWWAN,
            mbimExtensions: .none, fccLocked: false, fccUnlock: nil,
            qmi: QMIQuirks(firmwareRawIP: true, kernelRawIP: false),
            ipv6LinkLocalOnly: false, sessionLinks: .none, slots: 1, usbInterfaceNumber: 4),
        DeviceProfile(
            name: .usbQMIUIMOnly, models: "Sierra Wireless MC7455 / EM7430 (USB, QMI)",
            manufacturer: "Sierra Wireless, Incorporated", model: "MC7455", bus: .usb,
            vendorID: 0x1199, productID: 0x9071, subsystemIDs: nil, driver: "qmi_wwan",
            controlProtocol: .qmi, controlPort: .cdcWDM, extraPorts: [], netDevice: .usbWWAN,
            mbimExtensions: .none, fccLocked: false, fccUnlock: nil,
            qmi: QMIQuirks(firmwareRawIP: true, kernelRawIP: true, dmsUIMRefused: true),
            ipv6LinkLocalOnly: false, sessionLinks: .none, slots: 1, usbInterfaceNumber: 8),
        DeviceProfile(
            name: .usbQMIQMAP, models: "Quectel RM500Q (USB, QMI with QMAP)", manufacturer: "Quectel",
            model: "RM500Q-GL", bus: .usb,
            vendorID: 0x2c7c, productID: 0x0800, subsystemIDs: nil, driver: "qmi_wwan",
            controlProtocol: .qmi, controlPort: .cdcWDM, extraPorts: ["AT"], netDevice: .usbWWAN,
            mbimExtensions: .none, fccLocked: false, fccUnlock: nil,
            qmi: QMIQuirks(
                firmwareRawIP: true, kernelRawIP: true, dmsUIMRefused: true, qmap: true, ethernetFraming: false),
            ipv6LinkLocalOnly: false, sessionLinks: .qmimux, slots: 1, usbInterfaceNumber: 4),
        DeviceProfile(
            name: .pcieMHIMBIM, models: "Quectel EM120R-GL (1eac:1001), Foxconn T99W175 (105b:e0ab)",
            manufacturer: "Quectel", model: "EM120R-GL", bus: .pcie,
            vendorID: 0x1eac, productID: 0x1001, subsystemIDs: (0x1eac, 0x2001), driver: "mhi-pci-generic",
            controlProtocol: .mbim, controlPort: .wwanPort, extraPorts: ["AT"], netDevice: .wwanDefaultLink,
            mbimExtensions: .v2, fccLocked: false, fccUnlock: nil, qmi: QMIQuirks(),
            ipv6LinkLocalOnly: false, sessionLinks: .wwanLink, slots: 1),
        DeviceProfile(
            name: .pcieMHINet, models: "Quectel RM520N-GL (PCIe, QMI over MHI with mhi_net)", manufacturer: "Quectel",
            model: "RM520N-GL", bus: .pcie,
            vendorID: 0x1eac, productID: 0x1007, subsystemIDs: (0x1eac, 0x2007), driver: "mhi-pci-generic",
            controlProtocol: .qmi, controlPort: .wwanPort, extraPorts: ["AT"], netDevice: .mhiNet,
            mbimExtensions: .none, fccLocked: false, fccUnlock: nil,
            qmi: QMIQuirks(firmwareRawIP: true, kernelRawIP: true, qmap: true, ethernetFraming: false),
            ipv6LinkLocalOnly: false, sessionLinks: .none, slots: 1),
        DeviceProfile(
            name: .pcieT7xx, models: "Fibocom FM350-GL (14c3:4d75, MediaTek T700)", manufacturer: "Fibocom",
            model: "FM350-GL", bus: .pcie,
            vendorID: 0x14c3, productID: 0x4d75, subsystemIDs: (0x14c3, 0x4d75), driver: "mtk_t7xx",
            controlProtocol: .mbim, controlPort: .wwanPort, extraPorts: ["AT"], netDevice: .wwanDefaultLink,
            mbimExtensions: .v2, fccLocked: true, fccUnlock: .atPort, qmi: QMIQuirks(),
            ipv6LinkLocalOnly: true, sessionLinks: .wwanLink, slots: 1),
        DeviceProfile(
            name: .pcieIOSM, models: "Intel XMM7560 / Fibocom L860-GL (8086:7560)", manufacturer: "Fibocom",
            model: "L860-GL", bus: .pcie,
            vendorID: 0x8086, productID: 0x7560, subsystemIDs: (0x8086, 0x7560), driver: "iosm",
            controlProtocol: .mbim, controlPort: .wwanPort, extraPorts: [], netDevice: .wwanDefaultLink,
            mbimExtensions: .none, fccLocked: true, fccUnlock: .vendorMBIM, qmi: QMIQuirks(),
            ipv6LinkLocalOnly: false, sessionLinks: .wwanLink, slots: 1),
        DeviceProfile(
            name: .pcieIOSMUnsupported, models: "Intel XMM7360 / Fibocom L850-GL (8086:7360)", manufacturer: "Fibocom",
            model: "L850-GL", bus: .pcie,
            vendorID: 0x8086, productID: 0x7360, subsystemIDs: (0x8086, 0x7360), driver: "iosm",
            controlProtocol: nil, controlPort: .none, extraPorts: ["XMMRPC", "AT"], netDevice: .none,
            mbimExtensions: .none, fccLocked: false, fccUnlock: nil, qmi: QMIQuirks(),
            ipv6LinkLocalOnly: false, sessionLinks: .none, slots: 1),
        DeviceProfile(
            name: .routerMode, models: "Huawei E3372h HiLink (12d1:14dc), modules in ECM mode", manufacturer: "Huawei",
            model: "E3372h", bus: .usb,
            vendorID: 0x12d1, productID: 0x14dc, subsystemIDs: nil, driver: "cdc_ether",
            controlProtocol: nil, controlPort: .none, extraPorts: [], netDevice: .usbEthernet,
            mbimExtensions: .none, fccLocked: false, fccUnlock: nil, qmi: QMIQuirks(),
            ipv6LinkLocalOnly: false, sessionLinks: .none, slots: 1),
        DeviceProfile(
            name: .dualSIM, models: "Quectel EM160R-GL / dual-SIM eSIM laptop modules (USB MBIM)",
            manufacturer: "Quectel", model: "EM160R-GL", bus: .usb,
            vendorID: 0x2c7c, productID: 0x0620, subsystemIDs: nil, driver: "cdc_mbim",
            controlProtocol: .mbim, controlPort: .cdcWDM, extraPorts: [], netDevice: .usbWWAN,
            mbimExtensions: .v3, fccLocked: false, fccUnlock: nil, qmi: QMIQuirks(),
            ipv6LinkLocalOnly: false, sessionLinks: .vlan, slots: 2)
    ]
}
