import CellpathCore
import Glibc
import IPConfiguration
import ModemDiscovery
import Modems
import SystemSupport

/// The data path of a QMI modem behind qmi_wwan, made to carry packets before a call starts,
/// as libqmi's qmi-network and ModemManager make it: the firmware's data format (WDA) and the
/// kernel's framing (`qmi/raw_ip`) aligned, or, on firmware that multiplexes with QMAP, a
/// `qmimuxN` device added through `qmi/add_mux` with the call's WDS clients bound to its mux id.
/// Net devices without qmi_wwan's `qmi/` attributes (mhi_net, cdc_mbim) need nothing.
struct QMIDataPath {
    let modemIndex: Int
    /// The sysfs root (`/sys`, or the simulated world's).
    let sysfs: String
    /// The modem's net device (`wwan0`): the master of the mux devices.
    let master: String
    let logger: Logger

    /// How long a change of a qmi_wwan attribute may take to show (the simulated kernel takes
    /// writes in on the modem's thread).
    static let settleMicroseconds: useconds_t = 250_000

    private var directory: String { "\(sysfs)/class/net/\(master)/qmi" }

    /// Where the call's packets will flow.
    struct Prepared: Equatable {
        /// The interface to configure: the master, or the mux device.
        var interface: String
        /// The QMAP mux id, when the session is multiplexed.
        var muxID: UInt8?
    }

    /// Whether preparing reads the firmware's data format: the net device is qmi_wwan's.
    var readsFirmwareFormat: Bool { FileSystem.exists(directory) || driver() == "qmi_wwan" }

    /// Aligns the firmware, whose data format `backend.dataFormat()` read (nil: no WDA), and the
    /// kernel through `backend`, before connecting; throws when the path would drop every packet.
    /// The firmware's format is changed only where it must.
    func prepare(_ backend: any ModemBackend, firmwareFormat: DataFormat?) async throws -> Prepared {
        guard let kernelRawIP = rawIP() else {
            guard readsFirmwareFormat else { return Prepared(interface: master) }
            return try await alignWithoutAttribute(backend, firmwareFormat)
        }
        var firmware = firmwareFormat ?? DataFormat(linkLayer: .ethernet)
        logger.info(
            "data format: the firmware sends \(firmware.linkLayer.rawValue)\(firmware.qmap ? " with QMAP" : ""), \(master) expects \(kernelRawIP ? "raw-ip" : "802-3")"
        )
        if FileSystem.exists("\(directory)/add_mux") {
            let port = MuxDataPort(muxID: freeMuxID(), endpoint: .hsusb, interfaceNumber: interfaceNumber())
            if !firmware.qmap {
                // Firmware without QMAP keeps its format and says so.
                firmware =
                    try await backend.setDataFormat(DataFormat(linkLayer: .rawIP, qmap: true), endpoint: port)
                    ?? firmware
            }
            if firmware.qmap { return try await multiplex(port, backend) }
        } else if firmware.qmap {
            throw CellpathError(
                .unavailable,
                "modem \(modemIndex)'s firmware multiplexes sessions with QMAP, but the kernel's qmi_wwan on \(master) cannot add mux devices (no qmi/add_mux)",
                hint:
                    "use Linux 4.20 or later, or switch QMAP off: qmicli --wda-set-data-format=link-layer-protocol=raw-ip,ul-protocol=disabled,dl-protocol=disabled"
            )
        }
        let wanted = firmware.linkLayer == .rawIP
        guard kernelRawIP != wanted else { return Prepared(interface: master) }
        if try setRawIP(wanted) {
            logger.info("\(master) set to expect \(firmware.linkLayer.rawValue), as the firmware sends")
            return Prepared(interface: master)
        }
        let kernel = DataFormat(linkLayer: kernelRawIP ? .rawIP : .ethernet)
        if try await backend.setDataFormat(kernel, endpoint: nil)?.linkLayer == kernel.linkLayer {
            logger.info("the firmware set to send \(kernel.linkLayer.rawValue), as \(master) expects")
            return Prepared(interface: master)
        }
        throw mismatch(
            firmware: firmware.linkLayer, kernel: kernel.linkLayer,
            reason: "\(master)'s qmi/raw_ip did not take the change")
    }

    /// A qmi_wwan without `qmi/raw_ip` (before Linux 4.5) expects 802.3 frames: the firmware must send them.
    private func alignWithoutAttribute(_ backend: any ModemBackend, _ firmware: DataFormat?) async throws -> Prepared {
        guard let firmware, firmware.linkLayer != .ethernet || firmware.qmap else {
            return Prepared(interface: master)
        }
        let ethernet = DataFormat(linkLayer: .ethernet)
        if try await backend.setDataFormat(ethernet, endpoint: nil) == ethernet {
            logger.info("the firmware set to send 802-3, as \(master) expects (its qmi_wwan has no qmi/raw_ip)")
            return Prepared(interface: master)
        }
        throw mismatch(
            firmware: firmware.linkLayer, kernel: .ethernet,
            reason:
                "the kernel's qmi_wwan has no qmi/raw_ip (older than Linux 4.5) and the firmware does not send 802-3")
    }

    private func mismatch(firmware: DataFormat.LinkLayer, kernel: DataFormat.LinkLayer, reason: String) -> CellpathError
    {
        CellpathError(
            .unavailable,
            "modem \(modemIndex)'s data formats do not match: the firmware sends \(firmware.rawValue), the kernel's qmi_wwan on \(master) expects \(kernel.rawValue), and \(reason); every packet would be lost",
            hint: firmware == .rawIP
                ? "set \(master) down, then echo Y > /sys/class/net/\(master)/qmi/raw_ip (Linux 4.5 or later)"
                : "qmicli --wda-set-data-format=link-layer-protocol=raw-ip, then set \(master)'s qmi/raw_ip to Y")
    }

    /// QMAP: raw IP on the master, the master up without an address, a mux device of `port`'s
    /// id, and the call's WDS clients bound to it.
    private func multiplex(_ port: MuxDataPort, _ backend: any ModemBackend) async throws -> Prepared {
        if rawIP() != true {
            guard try setRawIP(true) else {
                throw mismatch(
                    firmware: .rawIP, kernel: .ethernet, reason: "\(master)'s qmi/raw_ip did not take the change")
            }
        }
        if InterfaceState.isUp(master) != true { try InterfaceState.setLink(master, up: true) }
        let before = Set(uppers())
        do {
            try FileSystem.overwrite("\(port.muxID)\n", at: "\(directory)/add_mux")
        } catch {
            throw CellpathError(
                .unavailable, "couldn't add QMAP mux \(port.muxID) on \(master): \(error.reason)",
                hint: "the kernel's qmi_wwan needs Linux 4.20 or later for qmi/add_mux")
        }
        var added: String?
        let deadline = ContinuousClock.now + .seconds(2)
        do {
            while added == nil && ContinuousClock.now < deadline {
                added = uppers().first { !before.contains($0) && $0.hasPrefix("qmimux") }
                if added == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
        } catch {
            // Cancelled (Ctrl-C) after the mux was asked for: it must not outlive the run, even
            // when the kernel adds it only now.
            for _ in 0 ..< 250 where !muxIDs().contains(port.muxID) { usleep(20_000) }
            if let problem = removeMux(port.muxID) { logger.warning("\(problem)") }
            throw error
        }
        guard let added else {
            throw CellpathError(
                .unavailable, "the kernel added no mux device for QMAP mux \(port.muxID) on \(master)",
                hint: "check dmesg for qmi_wwan's reason")
        }
        await backend.bind(to: port)
        logger.info("QMAP: session on \(added) (mux \(port.muxID) over \(master))")
        return Prepared(interface: added, muxID: port.muxID)
    }

    /// Removes the mux device of `muxID` (`qmi/del_mux`), and sets the master down when no mux
    /// is left on it: it was up only to carry them. A problem to log, or nil.
    func removeMux(_ muxID: UInt8) -> String? {
        guard muxIDs().contains(muxID) else { return nil }
        do {
            try FileSystem.overwrite("\(muxID)\n", at: "\(directory)/del_mux")
        } catch {
            return "couldn't remove QMAP mux \(muxID) from \(master): \(error.reason)"
        }
        // The kernel removes it before the write returns; allow a few seconds for one that does not.
        var left = muxIDs()
        for _ in 0 ..< 250 where left.contains(muxID) {
            usleep(20_000)
            left = muxIDs()
        }
        guard left.isEmpty else { return nil }
        do {
            try InterfaceState.setLink(master, up: false)
        } catch {
            return "couldn't set \(master) down after its last QMAP mux: \(error.message)"
        }
        return nil
    }

    // MARK: The kernel's attributes

    /// `qmi/raw_ip`; nil when the net device has none.
    private func rawIP() -> Bool? {
        guard let text = FileSystem.readText("\(directory)/raw_ip") else { return nil }
        switch text.first(where: { !$0.isWhitespace }) {
        case "Y", "y", "1": return true
        case "N", "n", "0": return false
        default: return nil
        }
    }

    /// Sets `qmi/raw_ip`, with the master down meanwhile (the kernel refuses the change of a
    /// running device) and up again after; false when the kernel kept its value.
    private func setRawIP(_ value: Bool) throws(CellpathError) -> Bool {
        let wasUp = InterfaceState.isUp(master) == true
        if wasUp { try InterfaceState.setLink(master, up: false) }
        defer {
            if wasUp {
                do throws(CellpathError) {
                    try InterfaceState.setLink(master, up: true)
                } catch {
                    logger.warning("\(error.message)")
                }
            }
        }
        do {
            try FileSystem.overwrite(value ? "Y\n" : "N\n", at: "\(directory)/raw_ip")
        } catch {
            logger.warning("couldn't write \(directory)/raw_ip: \(error.reason)")
            return false
        }
        usleep(Self.settleMicroseconds)
        return rawIP() == value
    }

    /// The mux ids present (`qmi/add_mux` lists them, one `0x..` per line).
    private func muxIDs() -> [UInt8] {
        (FileSystem.readText("\(directory)/add_mux") ?? "").split(whereSeparator: \.isWhitespace).compactMap {
            $0.hasPrefix("0x") ? UInt8($0.dropFirst(2), radix: 16) : UInt8($0)
        }
    }

    private func freeMuxID() -> UInt8 {
        let used = Set(muxIDs())
        return (1 ... 254).first { !used.contains($0) } ?? 1
    }

    /// The master's upper devices (`upper_qmimux0`).
    private func uppers() -> [String] {
        (FileSystem.entries("\(sysfs)/class/net/\(master)/") ?? []).filter { $0.hasPrefix("upper_") }.map {
            String($0.dropFirst("upper_".count))
        }
    }

    /// The master's driver (`device/driver`'s name).
    private func driver() -> String? {
        guard let path = realpath("\(sysfs)/class/net/\(master)/device/driver", nil) else { return nil }
        defer { free(path) }
        return String(cString: path).split(separator: "/").last.map(String.init)
    }

    /// The USB interface number of the master's data interface (`device/bInterfaceNumber`, hex).
    private func interfaceNumber() -> UInt32 {
        FileSystem.readText("\(sysfs)/class/net/\(master)/device/bInterfaceNumber").flatMap {
            UInt32($0.filter { !$0.isWhitespace }, radix: 16)
        } ?? 0
    }
}
