import Glibc
import SystemSupport

/// The qmi_wwan side of a simulated QMI modem's net device: its sysfs `qmi/` directory, watched
/// with inotify on the modem's server thread. What a host writes there takes effect as the
/// kernel would make it: `raw_ip` sets the kernel's framing, `add_mux` / `del_mux` create and
/// remove `qmimuxN` devices (a TUN device through the bearer network, with its sysfs entries).
///
/// Regular files cannot refuse a write as the kernel's attributes do (-EBUSY, -EINVAL): the write
/// lands, the watch sees it at once, and a write the kernel would refuse is reverted with a
/// kernel-style line on stderr: `raw_ip` while the net device is up, an out-of-range or duplicate
/// mux id, an unknown one for `del_mux`. Confined to the modem's server thread.
final class QMIKernelPort {
    /// The inotify descriptor to poll.
    let fd: Int32
    /// `qmi/raw_ip`: the kernel passes raw IP (Y) or 802.3 frames (N).
    private(set) var rawIP: Bool
    /// The `qmimuxN` devices over this net device, by mux id, in creation order.
    private(set) var muxLinks: [(muxID: UInt8, name: String)] = []
    /// Writes of our own (reverts, the mux id lists) whose events are still to come, by attribute.
    /// Ours replace the file (an IN_MOVED_TO event, with a cookie of its own), a host writes into
    /// it (IN_CLOSE_WRITE): inotify merges two identical events in a row, so a host's write right
    /// after one of ours would otherwise be taken for ours and lost.
    private var ownWrites: [String: Int] = [:]
    /// Called with the attribute's name after each write of our own: tests write as a host there,
    /// between two of ours, as a host on another thread may.
    var afterOwnWrite: ((String) -> Void)?

    private let root: String
    private let directory: String
    private let masterName: String
    private let index: Int
    private let bearerNetwork: any BearerNetwork

    /// Watches `<sysfs>/class/net/<interface>/qmi`; nil when the device has none (not qmi_wwan).
    init?(sysfsRoot: String, interfaceName: String, index: Int, bearerNetwork: any BearerNetwork) {
        let directory = "\(sysfsRoot)/class/net/\(interfaceName)/qmi"
        guard FileSystem.exists("\(directory)/raw_ip") else { return nil }
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, directory, UInt32(IN_CLOSE_WRITE | IN_MOVED_TO)) >= 0 else {
            Glibc.close(fd)
            return nil
        }
        self.fd = fd
        root = sysfsRoot
        self.directory = directory
        masterName = interfaceName
        self.index = index
        self.bearerNetwork = bearerNetwork
        rawIP = Self.parseFlag(Self.read("\(directory)/raw_ip")) ?? false
    }

    /// The name of the `qmimux` device of `muxID`, if one exists.
    func muxLink(for muxID: UInt8) -> String? { muxLinks.first { $0.muxID == muxID }?.name }

    /// Handles the writes made since the last call.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let header = MemoryLayout<inotify_event>.size
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            guard n > 0 else { break }
            var offset = 0
            while offset + header <= n {
                let (mask, nameLength) = buffer.withUnsafeBytes {
                    (
                        $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                let nameBytes = buffer[(offset + header) ..< (offset + header + nameLength)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                if mask & UInt32(IN_MOVED_TO) != 0, let pending = ownWrites[name], pending > 0 {
                    ownWrites[name] = pending - 1
                    offset += header + nameLength
                    continue
                }
                switch name {
                case "raw_ip": rawIPWritten()
                case "add_mux": addMuxWritten()
                case "del_mux": delMuxWritten()
                default: break
                }
                offset += header + nameLength
            }
        }
    }

    /// Removes every `qmimux` device (the modem goes away).
    func removeMuxLinks() {
        for link in muxLinks { removeLink(link.name) }
        muxLinks = []
    }

    deinit { Glibc.close(fd) }

    // MARK: Attributes

    private func rawIPWritten() {
        guard let value = Self.parseFlag(Self.read("\(directory)/raw_ip")) else {
            return refuse("raw_ip", restoring: rawIP ? "Y" : "N", "invalid value")
        }
        guard value != rawIP else { return }
        if bearerNetwork.isInterfaceUp(modemIndex: index) {
            return refuse("raw_ip", restoring: rawIP ? "Y" : "N", "Cannot change a running device (EBUSY)")
        }
        rawIP = value
    }

    private func addMuxWritten() {
        let text = Self.read("\(directory)/add_mux")
        guard let mux = Self.parseMuxID(text), (1 ... 254).contains(mux) else {
            return refuse("add_mux", restoring: muxList, "mux_id out of range (EINVAL)")
        }
        guard muxLink(for: mux) == nil else {
            return refuse("add_mux", restoring: muxList, "mux_id already present (EINVAL)")
        }
        do {
            let name = try bearerNetwork.addMuxLink(modemIndex: index, muxID: mux)
            muxLinks.append((mux, name))
            try writeLinkEntries(name)
        } catch {
            return refuse("add_mux", restoring: muxList, "\(error)")
        }
        writeLists()
    }

    private func delMuxWritten() {
        let text = Self.read("\(directory)/del_mux")
        guard let mux = Self.parseMuxID(text), let link = muxLinks.first(where: { $0.muxID == mux }) else {
            return refuse("del_mux", restoring: muxList, "mux_id not present (EINVAL)")
        }
        removeLink(link.name)
        muxLinks.removeAll { $0.muxID == mux }
        writeLists()
    }

    /// What `add_mux` and `del_mux` read back: the mux ids of the `qmimux` devices, one per line.
    private var muxList: String { muxLinks.map { "0x" + hex2($0.muxID) + "\n" }.joined() }

    private func writeLists() {
        for file in ["add_mux", "del_mux"] { overwrite(file, muxList) }
    }

    /// Writes an attribute's content ourselves, replacing the file; its IN_MOVED_TO event is then skipped.
    private func overwrite(_ attribute: String, _ text: String) {
        let path = "\(directory)/\(attribute)"
        guard (try? FileSystem.write(text.utf8, to: path, mode: 0o644, durability: .untilReboot)) != nil else { return }
        ownWrites[attribute, default: 0] += 1
        afterOwnWrite?(attribute)
    }

    /// Puts back what the kernel would have kept, and says why as the kernel log would.
    private func refuse(_ attribute: String, restoring value: String, _ reason: String) {
        let restored = attribute == "raw_ip" ? value + "\n" : value
        overwrite(attribute, restored)
        let line = "simulated kernel: qmi_wwan \(masterName): write to qmi/\(attribute) refused: \(reason)\n"
        _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
    }

    // MARK: sysfs entries of a mux link

    /// `devices/virtual/net/<name>` with `lower_<master>`, `upper_<name>` under the master,
    /// and `class/net/<name>`, as `netdev_upper_dev_link` makes them.
    private func writeLinkEntries(_ name: String) throws {
        let device = "devices/virtual/net/\(name)"
        let master = masterDevicePath()
        try FileSystem.makeDirectories("\(root)/\(device)")
        try FileSystem.write("INTERFACE=\(name)\n", to: "\(root)/\(device)/uevent")
        try FileSystem.write("65534\n", to: "\(root)/\(device)/type")
        symlinkReplacing("\(root)/\(device)/subsystem", to: up(device) + "class/net")
        symlinkReplacing("\(root)/class/net/\(name)", to: "../../\(device)")
        if let master {
            symlinkReplacing("\(root)/\(device)/lower_\(masterName)", to: up(device) + master)
            symlinkReplacing("\(root)/\(master)/upper_\(name)", to: up(master) + device)
        }
    }

    private func removeLink(_ name: String) {
        if let master = masterDevicePath() { unlink("\(root)/\(master)/upper_\(name)") }
        unlink("\(root)/class/net/\(name)")
        FileSystem.removeTree("\(root)/devices/virtual/net/\(name)")
        bearerNetwork.removeMuxLink(modemIndex: index, name: name)
    }

    /// The master net device's directory, relative to the sysfs root (where `class/net/<master>` points).
    private func masterDevicePath() -> String? {
        guard let resolved = realpath("\(root)/class/net/\(masterName)", nil) else { return nil }
        defer { free(resolved) }
        guard let rootResolved = realpath(root, nil) else { return nil }
        defer { free(rootResolved) }
        let path = String(cString: resolved), base = String(cString: rootResolved) + "/"
        return path.hasPrefix(base) ? String(path.dropFirst(base.count)) : nil
    }

    private func up(_ relative: String) -> String {
        String(repeating: "../", count: relative.split(separator: "/").count)
    }

    private func symlinkReplacing(_ path: String, to target: String) {
        unlink(path)
        _ = symlink(target, path)
    }

    // MARK: Parsing

    private static func read(_ path: String) -> String {
        FileSystem.readText(path) ?? ""
    }

    /// A kernel boolean attribute: Y/N, 1/0 (kstrtobool).
    static func parseFlag(_ text: String) -> Bool? {
        switch text.first(where: { !$0.isWhitespace }) {
        case "Y", "y", "1": true
        case "N", "n", "0": false
        default: nil
        }
    }

    /// A mux id as kstrtou8 with base 0 reads it: decimal, 0x hex or 0 octal.
    static func parseMuxID(_ text: String) -> UInt8? {
        let trimmed = String(text.split(whereSeparator: \.isWhitespace).first ?? "")
        if trimmed.lowercased().hasPrefix("0x") { return UInt8(trimmed.dropFirst(2), radix: 16) }
        if trimmed.count > 1 && trimmed.hasPrefix("0") { return UInt8(trimmed.dropFirst(), radix: 8) }
        return UInt8(trimmed)
    }
}

private func hex2(_ value: UInt8) -> String {
    let text = String(value, radix: 16)
    return text.count == 1 ? "0" + text : text
}
