import Glibc
import ModemDiscovery
import SystemSupport

/// WWAN devices that modem discovery does not take, named for what they are: a modem with
/// neither MBIM nor QMI port (the Intel L850's XMM RPC), and router-mode modems (a USB net
/// device of cdc_ether, cdc_ncm or rndis_host that does its own NAT). Read from sysfs only.
enum DeviceShapeChecks {
    /// The drivers of USB modems in router mode (HiLink, ECM, NCM, RNDIS).
    static let routerDrivers: Set<String> = ["cdc_ether", "cdc_ncm", "rndis_host"]

    static func all(_ roots: DeviceRoots) -> [DoctorCheck] {
        unsupported(roots) + routerMode(roots)
    }

    /// Each WWAN device (`class/wwan`) whose ports are neither MBIM nor QMI.
    static func unsupported(_ roots: DeviceRoots) -> [DoctorCheck] {
        var portsByDevice: [String: [String]] = [:]
        for name in entries("\(roots.sysfs)/class/wwan") {
            guard let path = FileSystem.realPath("\(roots.sysfs)/class/wwan/\(name)"),
                let type = FileSystem.readText(path + "/type")?.filter({ !$0.isWhitespace })
            else { continue }
            portsByDevice[parent(path), default: []].append("\(name) (\(type))")
        }
        return portsByDevice.keys.sorted().compactMap { device in
            let ports = portsByDevice[device]!.sorted()
            guard !ports.contains(where: { $0.hasSuffix("(MBIM)") || $0.hasSuffix("(QMI)") }) else { return nil }
            let id = ids(above: device)
            let xmm = ports.contains { $0.hasSuffix("(XMMRPC)") }
            let what =
                xmm
                ? "an Intel XMM7360 (L850) modem: it speaks XMM RPC and AT, not MBIM or QMI"
                : "a WWAN device with neither MBIM nor QMI port"
            return DoctorCheck(
                "unsupported", .warn, "unsupported hardware: \(what)",
                evidence: ["device: \(device)", "ports: \(ports.joined(separator: ", "))"]
                    + (id.map { ["id: \($0)"] } ?? []),
                remedy: xmm
                    ? "cellpath cannot use it: use a modem with MBIM or QMI "
                        + "(the xmm7360-pci project drives the L850 outside ModemManager)"
                    : "cellpath needs an MBIM or QMI control port")
        }
    }

    /// Each USB net device of a router-mode driver.
    static func routerMode(_ roots: DeviceRoots) -> [DoctorCheck] {
        entries("\(roots.sysfs)/class/net").sorted().compactMap { name in
            guard let path = FileSystem.realPath("\(roots.sysfs)/class/net/\(name)"),
                let driver = HostProbes.linkName(parent(parent(path)) + "/driver"),
                routerDrivers.contains(driver)
            else {
                return nil
            }
            let id = ids(above: path)
            return DoctorCheck(
                "router_mode", .warn,
                "\(name) is a modem in router mode (\(driver)): no MBIM or QMI control",
                evidence: ["device: \(parent(parent(path)))", "driver: \(driver)"]
                    + (id.map { ["id: \($0)"] } ?? []),
                remedy: "the modem does its own NAT: cellpath cannot read its SIM or bearer; "
                    + "a fetch through it needs --interface \(name) --allow-any-interface; "
                    + "switch it to MBIM or QMI mode to use it as a modem")
        }
    }

    /// The USB (`idVendor:idProduct`) or PCI (`vendor:device`) id of the first device above `path`.
    private static func ids(above path: String) -> String? {
        var directory = path
        while directory.count > 1 {
            let read = { (file: String) in
                FileSystem.readText("\(directory)/\(file)")?.filter { !$0.isWhitespace }.withoutHexPrefix()
            }
            if let vendor = read("idVendor"), let product = read("idProduct") { return "\(vendor):\(product)" }
            if let vendor = read("vendor"), let product = read("device") { return "\(vendor):\(product)" }
            directory = parent(directory)
        }
        return nil
    }

    private static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// The names in directory `path`, without `.` and `..`.
    private static func entries(_ path: String) -> [String] { FileSystem.entries(path) ?? [] }
}

extension String {
    /// A PCI id without its `0x` prefix (`0x8086` → `8086`).
    fileprivate func withoutHexPrefix() -> String { hasPrefix("0x") ? String(dropFirst(2)) : self }
}
