import CellpathCore
import CommandLineKit
import Glibc
import ModemDiscovery
import SystemSupport

/// `doctor --capture FILE`: a JSON snapshot of the machine's modems for a bug report — its
/// `format`, and per modem its shape (`DeviceShape`, which `cellpath sim up --device-capture`
/// rebuilds), its sysfs subtree and its net devices' (attributes and links), what the modem
/// reported (its record as `modems --json` has it), and whether ModemManager runs. IMEI, IMSI, ICCID,
/// MSISDNs, USB serial numbers and IP addresses are replaced by consistent placeholders
/// (`<imei-1>`) unless `--verbose-full`.
struct DoctorCapture {
    /// How much of sysfs is read: directory depth below a device, entries in all, bytes per attribute.
    static let maximumDepth = 4
    static let maximumEntries = 2000
    static let maximumAttributeBytes = 4096

    let roots: DeviceRoots
    let modemManager: Bool

    /// The snapshot as JSON text, redacted with `placeholders` unless `disclosure` is `.full`.
    func json(_ reports: [ModemReport], _ disclosure: Disclosure) -> String {
        var placeholders = Placeholders()
        var record = Record()
        record.add("format", .int(DeviceShape.captureFormat))
        record.add("cellpath", .string(CellpathVersion.current))
        record.add("modemmanager_running", .bool(modemManager))
        record.add(
            "modems",
            .list(
                reports.map { report in
                    placeholders.collect(report, roots: roots)
                    var modem = Record()
                    modem.add("index", .int(report.modem.index))
                    modem.add("report", .record(ModemListing.record(report, .full)))
                    modem.add("shape", (try? ValueEncoder.encode(shape(report))) ?? .null)
                    var budget = Self.maximumEntries
                    var sysfs = Record()
                    sysfs.add(
                        report.modem.devicePath, .record(tree(report.modem.devicePath, depth: 0, budget: &budget)))
                    // The USB device above the interface (ids, serial number), its attributes only.
                    let device = parent(report.modem.devicePath)
                    if FileSystem.readText(device + "/idVendor") != nil {
                        sysfs.add(device, .record(tree(device, depth: Self.maximumDepth, budget: &budget)))
                    }
                    for interface in report.modem.interfaces {
                        guard let path = FileSystem.realPath("\(roots.sysfs)/class/net/\(interface)"),
                            !path.hasPrefix(report.modem.devicePath + "/")
                        else { continue }
                        sysfs.add(path, .record(tree(path, depth: 1, budget: &budget)))
                    }
                    modem.add("sysfs", .record(sysfs))
                    return .record(modem)
                }))
        let text = Renderer(json: true, color: false).render(Output(record))
        return disclosure == .full ? text : placeholders.redact(text)
    }

    /// The attributes (text, or hex when binary), links and subdirectories of `path`, not
    /// following links, down to `maximumDepth`.
    private func tree(_ path: String, depth: Int, budget: inout Int) -> Record {
        var attributes = Record(), links = Record(), directories = Record()
        for name in entries(path).sorted() where budget > 0 {
            budget -= 1
            let full = "\(path)/\(name)"
            var info = stat()
            guard lstat(full, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                links.add(name, .optional(HostProbes.linkTarget(full)))
            case S_IFDIR where depth < Self.maximumDepth:
                directories.add(name, .record(tree(full, depth: depth + 1, budget: &budget)))
            case S_IFREG where info.st_mode & S_IRUSR != 0:
                if let value = attribute(full) { attributes.add(name, .string(value)) }
            default:
                continue
            }
        }
        var record = Record()
        record.add("attributes", .record(attributes))
        record.add("links", .record(links))
        if !directories.fields.isEmpty { record.add("directories", .record(directories)) }
        return record
    }

    /// A sysfs attribute: its text without the last line end, or `hex:` and its bytes when binary.
    private func attribute(_ path: String) -> String? {
        guard let bytes = try? FileSystem.read(path, limit: Self.maximumAttributeBytes) else { return nil }
        let isText = !bytes.contains(0) && String(validating: bytes, as: UTF8.self) != nil
        guard isText else { return "hex:" + bytes.map { String($0, radix: 16).leftPadded(2) }.joined() }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    private func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    private func entries(_ path: String) -> [String] { FileSystem.entries(path) ?? [] }
}

/// Personal data found in the modems' reports and sysfs, each value with its placeholder:
/// the same value always gets the same one (`<iccid-1>`), so that a snapshot stays readable.
struct Placeholders {
    private(set) var values: [(value: String, placeholder: String)] = []
    private var counts: [String: Int] = [:]

    /// Adds `value` of `kind` (`imei`, `address`, …) unless it is already known or too short to be one.
    mutating func add(_ value: String?, _ kind: String) {
        guard let value, value.count >= 3, !values.contains(where: { $0.value == value }) else { return }
        counts[kind, default: 0] += 1
        values.append((value, "<\(kind)-\(counts[kind]!)>"))
    }

    /// The personal data of one modem: what it reported, its USB serial number, its interfaces' addresses.
    mutating func collect(_ report: ModemReport, roots: DeviceRoots) {
        let status = report.status
        add(status?.imei, "imei")
        add(status?.sim?.iccid, "iccid")
        add(status?.sim?.imsi, "imsi")
        for msisdn in status?.sim?.msisdns ?? [] { add(msisdn, "msisdn") }
        let bearer = status?.bearer
        for address in [bearer?.ipv4Address, bearer?.gateway, bearer?.ipv6Address, bearer?.ipv6Gateway] {
            add(address, "address")
        }
        for server in bearer?.dnsServers ?? [] { add(server, "address") }
        let device = report.modem.devicePath.split(separator: "/").dropLast().joined(separator: "/")
        add(FileSystem.readText("/" + device + "/serial")?.filter { !$0.isWhitespace }, "serial")
        for interface in report.modem.interfaces {
            for address in InterfaceSnapshot.read(interface).addresses {
                add(address.split(separator: "%").first.map(String.init), "address")
            }
        }
    }

    /// `text` with every known value replaced by its placeholder, longest values first.
    func redact(_ text: String) -> String {
        values.sorted { $0.value.count > $1.value.count }.reduce(text) { text, entry in
            text.replacingEvery(entry.value, with: entry.placeholder)
        }
    }
}

extension String {
    /// The text with `count - self.count` zeros before it.
    fileprivate func leftPadded(_ count: Int) -> String {
        String(repeating: "0", count: Swift.max(0, count - self.count)) + self
    }
}
