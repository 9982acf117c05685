import Glibc
import SystemSupport

/// udev's database of device properties (`<udev root>/data/`), read as ModemManager reads it to
/// decide whether to leave a modem alone.
public struct UdevDatabase: Sendable {
    /// The property that tells ModemManager to ignore a device.
    public static let ignoreProperty = "ID_MM_DEVICE_IGNORE"

    public var roots: DeviceRoots

    public init(roots: DeviceRoots) {
        self.roots = roots
    }

    /// Whether udev marks `port` `ID_MM_DEVICE_IGNORE=1`: on its character device
    /// (`data/c<major>:<minor>`) or on a USB or PCI device above it in sysfs (`data/+usb:<name>`,
    /// `data/+pci:<name>`), as ModemManager looks at the port and its physical device.
    public func modemManagerIgnores(_ port: ControlPort) -> Bool {
        entries(of: port).contains { properties("\(roots.udev)/data/\($0)")[Self.ignoreProperty] == "1" }
    }

    /// The names of the database entries of `port` and the USB and PCI devices above it.
    func entries(of port: ControlPort) -> [String] {
        var names: [String] = []
        var info = stat()
        if stat(port.devicePath, &info) == 0, info.st_mode & S_IFMT == S_IFCHR {
            let device = UInt64(info.st_rdev)
            let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
            let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
            names.append("c\(major):\(minor)")
        }
        let sysfs = FileSystem.realPath(roots.sysfs) ?? roots.sysfs
        for subsystem in ["usbmisc", "wwan"] {
            let classEntry = "\(roots.sysfs)/class/\(subsystem)/\(port.name)"
            guard var path = FileSystem.realPath(classEntry) else { continue }
            if let number = read("\(classEntry)/dev"), !names.contains("c\(number)") { names.append("c\(number)") }
            while path.hasPrefix(sysfs + "/"), path.count > sysfs.count {
                let bus = FileSystem.realPath("\(path)/subsystem").flatMap {
                    $0.split(separator: "/").last.map(String.init)
                }
                if let bus, bus == "usb" || bus == "pci", let name = path.split(separator: "/").last {
                    names.append("+\(bus):\(name)")
                }
                path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
            }
        }
        return names
    }

    /// The `E:` lines of a database entry: its properties; none when it is missing.
    func properties(_ path: String) -> [String: String] {
        guard let text = FileSystem.readText(path) else { return [:] }
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("E:") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            result[String(line[line.index(line.startIndex, offsetBy: 2) ..< equals])] = String(
                line[line.index(after: equals)...])
        }
        return result
    }

    private func read(_ path: String) -> String? {
        FileSystem.readText(path).map { String($0.split(separator: "\n").first ?? "") }
    }

}
