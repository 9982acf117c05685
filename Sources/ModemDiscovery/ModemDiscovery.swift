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

/// A modem found in sysfs: one physical device, however many control ports it exposes.
public struct DiscoveredModem: Sendable, Equatable, Codable {
    /// Position in discovery order (sorted by control port name), from 0.
    public var index: Int
    /// The physical device's sysfs path (a USB interface or a PCI function), resolved.
    public var devicePath: String
    /// Its control ports, usbmisc first, each name once.
    public var ports: [ControlPort]
    /// Its network interfaces (`wwan0`).
    public var interfaces: [String]
    /// The USB device's vendor and product ids (hex) and names, when it is a USB modem.
    public var usbVendorID: String?
    public var usbProductID: String?
    public var manufacturer: String?
    public var model: String?

    public init(index: Int, devicePath: String, ports: [ControlPort], interfaces: [String], usbVendorID: String? = nil,
                usbProductID: String? = nil, manufacturer: String? = nil, model: String? = nil) {
        self.index = index
        self.devicePath = devicePath
        self.ports = ports
        self.interfaces = interfaces
        self.usbVendorID = usbVendorID
        self.usbProductID = usbProductID
        self.manufacturer = manufacturer
        self.model = model
    }

    /// The protocol of its first control port.
    public var `protocol`: ModemProtocol { ports[0].protocol }
}

/// Finds WWAN modems from sysfs: `class/usbmisc/cdc-wdm*` bound to `cdc_mbim` or `qmi_wwan`, and
/// `class/wwan/*` ports of type MBIM or QMI (the `wwanN` devices themselves and AT or other ports
/// are skipped). Ports and network interfaces of one physical device make one modem. Reads files
/// only; any thread.
public struct ModemDiscovery: Sendable {
    public let roots: DeviceRoots

    public init(roots: DeviceRoots) {
        self.roots = roots
    }

    /// Every modem, ordered by its first control port's name.
    public func modems() -> [DiscoveredModem] {
        var byDevice: [String: DiscoveredModem] = [:]
        for (port, device) in usbmiscPorts() + wwanPorts() {
            var modem = byDevice[device] ?? DiscoveredModem(index: 0, devicePath: device, ports: [], interfaces: [])
            if !modem.ports.contains(where: { $0.name == port.name }) { modem.ports.append(port) }
            byDevice[device] = modem
        }
        for name in entries(of: "class/net") {
            guard let device = physicalDevice(of: "class/net/\(name)", subsystem: "net"), byDevice[device] != nil else { continue }
            byDevice[device]?.interfaces.append(name)
        }
        var modems = byDevice.values.sorted { $0.ports[0].name.naturallyBefore($1.ports[0].name) }
        for i in modems.indices {
            modems[i].index = i
            modems[i].interfaces.sort { $0.naturallyBefore($1) }
            fillUSBDetails(&modems[i])
        }
        return modems
    }

    /// The modem whose network interface is `name`, or nil when `name` is not a modem's
    /// (Wi-Fi, Ethernet, a VPN, or no such interface).
    public func modem(withInterface name: String) -> DiscoveredModem? {
        modems().first { $0.interfaces.contains(name) }
    }

    // MARK: sysfs

    /// `class/usbmisc/cdc-wdm*` whose USB interface is bound to cdc_mbim or qmi_wwan.
    private func usbmiscPorts() -> [(ControlPort, String)] {
        entries(of: "class/usbmisc").filter { $0.hasPrefix("cdc-wdm") }.compactMap { name in
            guard let device = physicalDevice(of: "class/usbmisc/\(name)", subsystem: "usbmisc") else { return nil }
            let driver = linkTarget("\(device)/driver").map { String($0.split(separator: "/").last ?? "") }
            let proto: ModemProtocol? = switch driver {
            case "cdc_mbim": .mbim
            case "qmi_wwan": .qmi
            default: nil
            }
            guard let proto else { return nil }
            return (ControlPort(name: name, devicePath: "\(roots.dev)/\(name)", protocol: proto), device)
        }
    }

    /// `class/wwan/*` ports of type MBIM or QMI.
    private func wwanPorts() -> [(ControlPort, String)] {
        entries(of: "class/wwan").compactMap { name in
            guard let type = read("class/wwan/\(name)/type") else { return nil }
            let proto: ModemProtocol? = switch type {
            case "MBIM": .mbim
            case "QMI": .qmi
            default: nil
            }
            guard let proto, let device = physicalDevice(of: "class/wwan/\(name)", subsystem: "wwan") else { return nil }
            return (ControlPort(name: name, devicePath: "\(roots.dev)/\(name)", protocol: proto), device)
        }
    }

    /// The physical device an entry of a class belongs to: its resolved path cut before the
    /// subsystem's directory (`…/1-1:1.12/usbmisc/cdc-wdm0` → `…/1-1:1.12`), and before the
    /// WWAN subsystem's own device (`…/0000:01:00.0/wwan/wwan0/wwan0mbim0` → `…/0000:01:00.0`).
    private func physicalDevice(of relative: String, subsystem: String) -> String? {
        guard let resolved = realPath("\(roots.sysfs)/\(relative)") else { return nil }
        var parts = resolved.split(separator: "/", omittingEmptySubsequences: false)
        guard let cut = parts.lastIndex(where: { $0 == subsystem }) else { return nil }
        parts.removeSubrange(cut...)
        if parts.count >= 2, parts[parts.count - 2] == "wwan", parts[parts.count - 1].hasPrefix("wwan") { parts.removeLast(2) }
        return parts.joined(separator: "/")
    }

    /// Vendor, product and names of the USB device above a USB interface (`1-1:1.0` → `1-1`).
    private func fillUSBDetails(_ modem: inout DiscoveredModem) {
        let parent = String(modem.devicePath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/"))
        guard let vendor = readAbsolute("\(parent)/idVendor") else { return }
        modem.usbVendorID = vendor
        modem.usbProductID = readAbsolute("\(parent)/idProduct")
        modem.manufacturer = readAbsolute("\(parent)/manufacturer")
        modem.model = readAbsolute("\(parent)/product")
    }

    private func entries(of relative: String) -> [String] { FileSystem.entries("\(roots.sysfs)/\(relative)") ?? [] }

    private func read(_ relative: String) -> String? { readAbsolute("\(roots.sysfs)/\(relative)") }

    /// A sysfs attribute's text, trimmed; nil when it cannot be read.
    private func readAbsolute(_ path: String) -> String? {
        FileSystem.readText(path).map { String($0.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()) }
    }

    private func linkTarget(_ path: String) -> String? { realPath(path) }

    private func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
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
            if let last = chunks.last, last.last?.isNumber == c.isNumber { chunks[chunks.count - 1].append(c) } else { chunks.append(String(c)) }
        }
        return chunks
    }
}
