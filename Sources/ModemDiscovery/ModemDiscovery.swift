import Glibc
import SystemSupport

/// The control protocol a modem's port speaks.
public enum ModemProtocol: String, Sendable, Codable, CaseIterable {
    case mbim, qmi
}

/// One control port of a modem: `cdc-wdm0` (USB, usbmisc class) or `wwan0mbim0` (the kernel's
/// WWAN subsystem, PCIe modems).
public struct ControlPort: Sendable, Equatable, Codable {
    public var name: String
    /// The character device, under the /dev root.
    public var devicePath: String
    public var `protocol`: ModemProtocol

    public init(name: String, devicePath: String, protocol: ModemProtocol) {
        self.name = name
        self.devicePath = devicePath
        self.protocol = `protocol`
    }
}

/// The bus of a modem's physical device.
public enum ModemBus: String, Sendable, Codable {
    case usb, pci
}

/// A modem found in sysfs: one physical device, however many control ports it exposes.
public struct DiscoveredModem: Sendable, Equatable, Codable {
    /// Position in discovery order (`ModemDiscovery.discover()`), from 0.
    public var index: Int
    /// The physical device's sysfs path, resolved: the USB device (`…/usb1/1-2`) or the PCI
    /// function (`…/0000:01:00.0`).
    public var devicePath: String
    /// Its control ports, usbmisc first, each name once.
    public var ports: [ControlPort]
    /// Its network interfaces, the one beside its first control port first (`wwan0`).
    public var interfaces: [String]
    /// Net devices multiplexed over its interfaces (`qmimux0`, `wwan0.1`): their uppers.
    public var links: [String]
    /// The USB device's vendor and product ids (hex) and names, when it is a USB modem.
    public var usbVendorID: String?
    public var usbProductID: String?
    public var manufacturer: String?
    public var model: String?
    /// The PCI function's vendor and device ids (hex, no `0x`), when it is a PCIe modem.
    public var pciVendorID: String?
    public var pciDeviceID: String?

    public init(
        index: Int, devicePath: String, ports: [ControlPort], interfaces: [String], usbVendorID: String? = nil,
        usbProductID: String? = nil, manufacturer: String? = nil, model: String? = nil, links: [String] = [],
        pciVendorID: String? = nil, pciDeviceID: String? = nil
    ) {
        self.index = index
        self.devicePath = devicePath
        self.ports = ports
        self.interfaces = interfaces
        self.links = links
        self.usbVendorID = usbVendorID
        self.usbProductID = usbProductID
        self.manufacturer = manufacturer
        self.model = model
        self.pciVendorID = pciVendorID
        self.pciDeviceID = pciDeviceID
    }

    /// The protocol of its first control port.
    public var `protocol`: ModemProtocol { ports[0].protocol }
}

/// A modem found in sysfs that cellpath cannot drive: it has no MBIM or QMI control port.
public struct UncontrolledModem: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        /// WWAN ports of other kinds only (the Intel L850's XMM RPC and AT ports).
        case unsupported
        /// A USB modem of a modem vendor that routes (DHCP, NAT) behind a `cdc_ether`, `cdc_ncm`,
        /// `rndis_host` or `huawei_cdc_ncm` net device: a check can go through that device.
        case router
    }

    /// Position in discovery order, shared with the controlled modems.
    public var index: Int
    public var kind: Kind
    /// The physical device's sysfs path, resolved (USB device or PCI function).
    public var devicePath: String
    public var bus: ModemBus
    /// Vendor and product (USB) or device (PCI) ids, hex.
    public var vendorID: String
    public var productID: String
    public var manufacturer: String?
    /// The USB `product` string, or the name of a known PCI id.
    public var model: String?
    /// Its WWAN ports (`wwan0xmmrpc0`, `wwan0at0`) and their kernel types (`XMMRPC`, `AT`).
    public var ports: [String]
    public var portTypes: [String]
    /// Its network interfaces (a router-mode modem's `usb0`).
    public var interfaces: [String]
    /// The driver of its first network interface (router mode: `cdc_ether`…).
    public var driver: String?

    public init(
        index: Int, kind: Kind, devicePath: String, bus: ModemBus, vendorID: String, productID: String,
        manufacturer: String? = nil, model: String? = nil, ports: [String] = [], portTypes: [String] = [],
        interfaces: [String] = [], driver: String? = nil
    ) {
        self.index = index
        self.kind = kind
        self.devicePath = devicePath
        self.bus = bus
        self.vendorID = vendorID
        self.productID = productID
        self.manufacturer = manufacturer
        self.model = model
        self.ports = ports
        self.portTypes = portTypes
        self.interfaces = interfaces
        self.driver = driver
    }

    /// The hardware as people know it: `Intel XMM7360 (8086:7360)`.
    public var hardwareName: String {
        let name = [manufacturer, model].compactMap { $0 }.joined(separator: " ")
        return "\(name.isEmpty ? (bus == .pci ? "PCI device" : "USB device") : name) (\(vendorID):\(productID))"
    }

    /// Why cellpath cannot drive it, as the commands that need a modem say it.
    public var reason: String {
        switch kind {
        case .unsupported:
            return "\(hardwareName) exposes only \(Self.portKinds(portTypes)) ports: "
                + "cellpath needs an MBIM or QMI port; see docs/operations.md"
        case .router:
            let device = interfaces.first ?? "its network interface"
            return "\(hardwareName) is in router mode (\(driver ?? "USB network") device \(device), "
                + "no MBIM or QMI port): cellpath cannot read its state or bring up a bearer; "
                + "checks go through it with --interface \(device) --dns ADDRESS; see docs/operations.md"
        }
    }

    /// `["XMMRPC", "AT"]` → `XMM RPC and AT`: other kinds by name, AT last.
    static func portKinds(_ types: [String]) -> String {
        let names: [String: String] = ["XMMRPC": "XMM RPC", "FIREHOSE": "Firehose", "FASTBOOT": "Fastboot"]
        let unique = Array(Set(types)).sorted { ($0 == "AT" ? 1 : 0, $0) < ($1 == "AT" ? 1 : 0, $1) }
        let shown = unique.map { names[$0] ?? $0 }
        guard shown.count > 1 else { return shown.first ?? "no" }
        return shown.dropLast().joined(separator: ", ") + " and " + shown[shown.count - 1]
    }
}

/// Everything discovery found, in one order: the modems cellpath drives and those it cannot.
public struct Discovery: Sendable, Equatable {
    public var modems: [DiscoveredModem]
    public var uncontrolled: [UncontrolledModem]

    public init(modems: [DiscoveredModem], uncontrolled: [UncontrolledModem]) {
        self.modems = modems
        self.uncontrolled = uncontrolled
    }

    public var isEmpty: Bool { modems.isEmpty && uncontrolled.isEmpty }

    /// Whether `name` is a network interface a check may leave through: a controlled modem's
    /// interface or data link, or a router-mode modem's interface.
    public func isCellularInterface(_ name: String) -> Bool {
        modems.contains { $0.interfaces.contains(name) || $0.links.contains(name) }
            || uncontrolled.contains { $0.kind == .router && $0.interfaces.contains(name) }
    }
}

/// Finds WWAN modems from sysfs: `class/usbmisc/cdc-wdm*` bound to `cdc_mbim` or `qmi_wwan`, and
/// `class/wwan/*` ports of type MBIM or QMI (the `wwanN` devices themselves are skipped). Ports
/// and net devices are grouped by their physical device, the innermost USB device or PCI function
/// above them (docs/operations.md, "Supported devices"): a net device belongs to the modem whose
/// physical device is its ancestor, so that mhi_net's `mhi_hwipN` (under an MHI channel device)
/// is the modem's too. Net devices with a `lower_*` link to a modem's are its data links. Devices
/// with other WWAN ports only, and USB router-mode modems of modem vendors, are found as
/// `UncontrolledModem`s. Reads files only; any thread.
public struct ModemDiscovery: Sendable {
    public let roots: DeviceRoots

    public init(roots: DeviceRoots) {
        self.roots = roots
    }

    /// Every modem cellpath can drive, in discovery order.
    public func modems() -> [DiscoveredModem] { discover().modems }

    /// `modem` as sysfs has it now, found by its physical device: under the names a reset gave
    /// it, with the net devices and data links made since it was discovered (ModemManager's
    /// multiplexed links). Nil when it is gone.
    public func current(_ modem: DiscoveredModem) -> DiscoveredModem? {
        modems().first { $0.devicePath == modem.devicePath }
    }

    /// The modem whose network interface is `name`, or nil when `name` is not a modem's
    /// (Wi-Fi, Ethernet, a VPN, or no such interface).
    public func modem(withInterface name: String) -> DiscoveredModem? {
        modems().first { $0.interfaces.contains(name) }
    }

    /// Every modem found, ordered by bus (USB, then PCI) and then by physical device path
    /// (`pathBefore`); indices follow that order across both kinds.
    public func discover() -> Discovery { Scan(roots: roots).discover() }

    /// Sysfs paths compared component by component: PCI addresses (`0000:0a:00.0`, fixed-width
    /// hex) as text, other components with digit runs as numbers (`1-2` before `1-10`).
    static func pathBefore(_ a: String, _ b: String) -> Bool {
        let x = a.split(separator: "/"), y = b.split(separator: "/")
        for (p, q) in zip(x, y) where p != q {
            return isPCIAddress(p) && isPCIAddress(q) ? p < q : String(p).naturallyBefore(String(q))
        }
        return x.count < y.count
    }

    /// `DDDD:BB:DD.F`, hex.
    private static func isPCIAddress(_ text: Substring) -> Bool {
        text.count == 12
            && text.enumerated().allSatisfy { i, c in
                switch i {
                case 4, 7: c == ":"
                case 10: c == "."
                default: c.isHexDigit
                }
            }
    }

    // MARK: grouping

    /// A control port and where it sits: its parent device (`…/1-1:1.0`, `…/wwan/wwan0`) and
    /// the physical device.
    struct PortEntry {
        var port: ControlPort
        var parent: String
        var device: String
    }

    /// A net device: its resolved path, parent device, driver, physical device and lower devices.
    struct NetEntry {
        var name: String
        var path: String
        var parent: String
        var driver: String?
        var device: String?
        var lowers: [String]
        var uppers: [String]
    }

    /// What one physical device has.
    struct DeviceGroup {
        var device: String
        var ports: [PortEntry] = []
        var otherPorts: [(name: String, type: String)] = []
        var nets: [NetEntry] = []
    }

    /// Names of PCIe modems' ids (sysfs has none; lspci takes them from pci.ids).
    static let knownPCIDevices: [String: (String, String)] = [
        "8086:7360": ("Intel", "XMM7360"), "8086:7560": ("Intel", "XMM7560"),
        "1eac:1001": ("Quectel", "EM120R-GL"), "1eac:1007": ("Quectel", "RM520N-GL"),
        "105b:e0ab": ("Foxconn", "T99W175"), "14c3:4d75": ("MediaTek", "T700")
    ]

    /// Drivers of USB net devices behind which a modem routes.
    static let routerModeDrivers: Set<String> = ["cdc_ether", "cdc_ncm", "rndis_host", "huawei_cdc_ncm"]

    /// USB vendor ids of modem makers: Huawei, ZTE, Quectel, Sierra Wireless, Fibocom, Telit,
    /// SIMCom, u-blox, Novatel Wireless, Alcatel (TCL).
    static let modemVendors: Set<String> = [
        "12d1", "19d2", "2c7c", "1199", "2cb7", "1bc7", "1e0e", "1546", "1410",
        "1bbb"
    ]
}

extension ModemDiscovery {
    /// One pass over sysfs: every path resolved and every device's bus read at most once
    /// (`PathResolver`), however many ports and net devices share them.
    private final class Scan {
        let roots: DeviceRoots
        private let paths = PathResolver()
        private var buses: [String: ModemBus?] = [:]
        private lazy var sysfsTop = realPath(roots.sysfs) ?? roots.sysfs

        init(roots: DeviceRoots) {
            self.roots = roots
        }

        func discover() -> Discovery {
            var groups: [String: DeviceGroup] = [:]
            for port in usbmiscPorts() + wwanPorts() {
                var group = groups[port.device] ?? DeviceGroup(device: port.device)
                if !group.ports.contains(where: { $0.port.name == port.port.name }) { group.ports.append(port) }
                groups[port.device] = group
            }
            for (name, type, device) in otherWWANPorts() {
                groups[device, default: DeviceGroup(device: device)].otherPorts.append((name, type))
            }
            let nets = netDevices()
            for net in nets where net.lowers.isEmpty {
                if let device = groups.keys.filter({ net.path.hasPrefix($0 + "/") }).max(by: { $0.count < $1.count }) {
                    groups[device]?.nets.append(net)
                } else if let device = net.device, isRouterMode(net, device: device) {
                    groups[device, default: DeviceGroup(device: device)].nets.append(net)
                }
            }
            let ordered = groups.values.sorted { a, b in
                let (x, y) = (busRank(a.device), busRank(b.device))
                return x != y ? x < y : ModemDiscovery.pathBefore(a.device, b.device)
            }
            var discovery = Discovery(modems: [], uncontrolled: [])
            for (index, group) in ordered.enumerated() {
                if group.ports.isEmpty {
                    discovery.uncontrolled.append(uncontrolled(group, index: index))
                } else {
                    discovery.modems.append(modem(group, index: index, nets: nets))
                }
            }
            return discovery
        }

        /// USB first, then PCI, then neither (the bus read once per device, `bus(of:)`).
        private func busRank(_ device: String) -> Int {
            switch bus(of: device) {
            case .usb: 0
            case .pci: 1
            case nil: 2
            }
        }

        private func modem(_ group: DeviceGroup, index: Int, nets: [NetEntry]) -> DiscoveredModem {
            let first = group.ports[0].parent
            let interfaces = group.nets.sorted { a, b in
                (a.parent == first) != (b.parent == first) ? a.parent == first : a.name.naturallyBefore(b.name)
            }.map(\.name)
            var modem = DiscoveredModem(
                index: index, devicePath: group.device, ports: group.ports.map(\.port),
                interfaces: interfaces, links: links(of: interfaces, among: nets))
            switch bus(of: group.device) {
            case .usb:
                modem.usbVendorID = attribute(group.device, "idVendor")
                modem.usbProductID = attribute(group.device, "idProduct")
                modem.manufacturer = attribute(group.device, "manufacturer")
                modem.model = attribute(group.device, "product")
            case .pci:
                let (vendor, device) = pciIDs(group.device)
                (modem.pciVendorID, modem.pciDeviceID) = (vendor, device)
                (modem.manufacturer, modem.model) = ModemDiscovery.knownPCIDevices["\(vendor):\(device)"] ?? (nil, nil)
            case nil:
                break
            }
            return modem
        }

        private func uncontrolled(_ group: DeviceGroup, index: Int) -> UncontrolledModem {
            let kind: UncontrolledModem.Kind = group.otherPorts.isEmpty ? .router : .unsupported
            let nets = group.nets.sorted { $0.name.naturallyBefore($1.name) }
            let ports = group.otherPorts.sorted { $0.name.naturallyBefore($1.name) }
            var modem = UncontrolledModem(
                index: index, kind: kind, devicePath: group.device, bus: .usb, vendorID: "",
                productID: "", ports: ports.map(\.name), portTypes: ports.map(\.type),
                interfaces: nets.map(\.name), driver: nets.first?.driver)
            if bus(of: group.device) == .pci {
                let (vendor, device) = pciIDs(group.device)
                modem.bus = .pci
                (modem.vendorID, modem.productID) = (vendor, device)
                (modem.manufacturer, modem.model) = ModemDiscovery.knownPCIDevices["\(vendor):\(device)"] ?? (nil, nil)
            } else {
                modem.vendorID = attribute(group.device, "idVendor") ?? "????"
                modem.productID = attribute(group.device, "idProduct") ?? "????"
                modem.manufacturer = attribute(group.device, "manufacturer")
                modem.model = attribute(group.device, "product")
            }
            return modem
        }

        /// The net devices stacked on `interfaces` (through `lower_*` links, or the interfaces'
        /// `upper_*` links), and on those in turn.
        private func links(of interfaces: [String], among nets: [NetEntry]) -> [String] {
            var linked = Set<String>(), below = Set(interfaces)
            while true {
                let found = nets.filter { net in
                    guard !below.contains(net.name) else { return false }
                    return net.lowers.contains { below.contains($0) }
                        || nets.contains { below.contains($0.name) && $0.uppers.contains(net.name) }
                }
                guard !found.isEmpty else { break }
                for net in found { linked.insert(net.name); below.insert(net.name) }
            }
            return linked.sorted { $0.naturallyBefore($1) }
        }

        /// A USB net device bound to a router-mode driver, on a device of a modem vendor.
        private func isRouterMode(_ net: NetEntry, device: String) -> Bool {
            guard let driver = net.driver, ModemDiscovery.routerModeDrivers.contains(driver), bus(of: device) == .usb,
                let vendor = attribute(device, "idVendor")
            else { return false }
            return ModemDiscovery.modemVendors.contains(vendor.lowercased())
        }

        // MARK: sysfs

        /// `class/usbmisc/cdc-wdm*` whose USB interface is bound to cdc_mbim or qmi_wwan.
        private func usbmiscPorts() -> [PortEntry] {
            entries(of: "class/usbmisc").filter { $0.hasPrefix("cdc-wdm") }.compactMap { name in
                guard let parent = parentDevice(of: "class/usbmisc/\(name)", subsystem: "usbmisc") else { return nil }
                let proto: ModemProtocol? =
                    switch driver(of: parent) {
                    case "cdc_mbim": .mbim
                    case "qmi_wwan": .qmi
                    default: nil
                    }
                guard let proto else { return nil }
                return PortEntry(
                    port: ControlPort(name: name, devicePath: "\(roots.dev)/\(name)", protocol: proto),
                    parent: parent, device: physicalDevice(above: parent, fallback: parent))
            }
        }

        /// `class/wwan/*` ports of type MBIM or QMI.
        private func wwanPorts() -> [PortEntry] {
            entries(of: "class/wwan").compactMap { name in
                guard let type = read("class/wwan/\(name)/type") else { return nil }
                let proto: ModemProtocol? =
                    switch type {
                    case "MBIM": .mbim
                    case "QMI": .qmi
                    default: nil
                    }
                guard let proto, let parent = parentDevice(of: "class/wwan/\(name)", subsystem: "wwan") else {
                    return nil
                }
                return PortEntry(
                    port: ControlPort(name: name, devicePath: "\(roots.dev)/\(name)", protocol: proto),
                    parent: parent, device: physicalDevice(above: parent, fallback: wwanFallback(parent)))
            }
        }

        /// `class/wwan/*` ports of other types (AT, XMMRPC…), with the physical device they are on.
        private func otherWWANPorts() -> [(String, String, String)] {
            entries(of: "class/wwan").compactMap { name in
                guard let type = read("class/wwan/\(name)/type"), type != "MBIM", type != "QMI",
                    let parent = parentDevice(of: "class/wwan/\(name)", subsystem: "wwan")
                else { return nil }
                return (name, type, physicalDevice(above: parent, fallback: wwanFallback(parent)))
            }
        }

        /// Every `class/net` entry with where it sits and what it is stacked on.
        private func netDevices() -> [NetEntry] {
            entries(of: "class/net").compactMap { name in
                guard let path = realPath("\(roots.sysfs)/class/net/\(name)") else { return nil }
                let parent = parentDevice(of: "class/net/\(name)", subsystem: "net")
                let links = entries(atAbsolute: path)
                return NetEntry(
                    name: name, path: path, parent: parent ?? "", driver: parent.flatMap(driver(of:)),
                    device: parent.map { physicalDevice(above: $0, fallback: $0) },
                    lowers: links.filter { $0.hasPrefix("lower_") }.map { String($0.dropFirst(6)) },
                    uppers: links.filter { $0.hasPrefix("upper_") }.map { String($0.dropFirst(6)) })
            }
        }

        /// The device a class entry hangs off: its resolved path cut before the subsystem's
        /// directory (`…/1-1:1.12/usbmisc/cdc-wdm0` → `…/1-1:1.12`).
        private func parentDevice(of relative: String, subsystem: String) -> String? {
            guard let resolved = realPath("\(roots.sysfs)/\(relative)") else { return nil }
            var parts = resolved.split(separator: "/", omittingEmptySubsequences: false)
            guard let cut = parts.lastIndex(where: { $0 == subsystem }) else { return nil }
            parts.removeSubrange(cut...)
            return parts.joined(separator: "/")
        }

        /// Without bus attributes, a WWAN port's physical device is the WWAN device's parent
        /// (`…/0000:01:00.0/wwan/wwan0` → `…/0000:01:00.0`).
        private func wwanFallback(_ parent: String) -> String {
            let parts = parent.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count >= 2, parts[parts.count - 2] == "wwan", parts[parts.count - 1].hasPrefix("wwan") else {
                return parent
            }
            return parts.dropLast(2).joined(separator: "/")
        }

        /// The innermost USB device or PCI function at or above `path`; `fallback` when the tree
        /// has neither (no bus attributes).
        private func physicalDevice(above path: String, fallback: String) -> String {
            let top = sysfsTop
            var current = path
            while current.count > top.count {
                if bus(of: current) != nil { return current }
                guard let slash = current.lastIndex(of: "/") else { break }
                current = String(current[..<slash])
            }
            return fallback
        }

        /// `usb` for a USB device (with `idVendor`; its interfaces have none), `pci` for a PCI
        /// function (`vendor`, `device`, `class`), each with its `subsystem` link to that bus.
        private func bus(of path: String) -> ModemBus? {
            if let known = buses[path] { return known }
            let found = readBus(of: path)
            buses.updateValue(found, forKey: path)
            return found
        }

        private func readBus(of path: String) -> ModemBus? {
            let subsystem = realPath("\(path)/subsystem").map { String($0.split(separator: "/").last ?? "") }
            if subsystem == "usb", attribute(path, "idVendor") != nil { return .usb }
            if subsystem == "pci", ["vendor", "device", "class"].allSatisfy({ attribute(path, $0) != nil }) {
                return .pci
            }
            return nil
        }

        /// A PCI function's vendor and device ids, without `0x`, lower case.
        private func pciIDs(_ path: String) -> (String, String) {
            func id(_ name: String) -> String {
                let text = (attribute(path, name) ?? "????").lowercased()
                return text.hasPrefix("0x") ? String(text.dropFirst(2)) : text
            }
            return (id("vendor"), id("device"))
        }

        /// The name of the driver bound to a device.
        private func driver(of device: String) -> String? {
            realPath("\(device)/driver").map { String($0.split(separator: "/").last ?? "") }
        }

        private func entries(of relative: String) -> [String] { entries(atAbsolute: "\(roots.sysfs)/\(relative)") }

        private func entries(atAbsolute path: String) -> [String] { FileSystem.entries(path) ?? [] }

        private func read(_ relative: String) -> String? { readAbsolute("\(roots.sysfs)/\(relative)") }

        private func attribute(_ device: String, _ name: String) -> String? { readAbsolute("\(device)/\(name)") }

        /// A sysfs attribute's text, trimmed; nil when it cannot be read.
        private func readAbsolute(_ path: String) -> String? {
            FileSystem.readText(path).map {
                String($0.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
            }
        }

        private func realPath(_ path: String) -> String? { paths.realPath(path) }
    }
}

extension String {
    /// `cdc-wdm2` before `cdc-wdm10`: digit runs compare as numbers.
    func naturallyBefore(_ other: String) -> Bool {
        let a = Self.chunks(self), b = Self.chunks(other)
        for (x, y) in zip(a, b) where x != y {
            if let m = Int(x), let n = Int(y) { return m < n }
            return x < y
        }
        return a.count < b.count
    }

    private static func chunks(_ text: String) -> [String] {
        var chunks: [String] = []
        for c in text {
            if let last = chunks.last, last.last?.isNumber == c.isNumber {
                chunks[chunks.count - 1].append(c)
            } else {
                chunks.append(String(c))
            }
        }
        return chunks
    }
}
