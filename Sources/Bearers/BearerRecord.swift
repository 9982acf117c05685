import CellpathCore
import Glibc
import IPConfiguration
import ModemDiscovery
import Modems
import SystemSupport

/// What cellpath knows about a modem's bearer across processes: whether it connected it (then
/// `bearer down` disconnects it), what disconnecting needs, the addressing it applied (so that
/// exactly that is undone), and who uses it now. One JSON file per physical modem (its USB
/// device or PCI function) under `/run/cellpath/`: a modem that resets and comes back under
/// other names (`cdc-wdm3`, `wwan3`) keeps its record.
public struct BearerRecord: Sendable, Equatable, Codable {
    /// The modem's physical device (its sysfs path, as discovery resolved it); nil in records
    /// of earlier versions, which were named by the control port.
    public var device: String?
    /// The modem's IMEI, when the backend read one: a second identity, by which a modem that
    /// re-enumerated under another physical device path finds its record again.
    public var imei: String?
    /// The modem's control port (device path) and protocol, as discovery last found them.
    public var controlPort: String
    public var `protocol`: String
    /// The net device the bearer carries data on, which cellpath configured: the modem's, a QMAP
    /// mux device cellpath added, or the link ModemManager's bearer names.
    public var interface: String
    public var apn: String?
    /// True when cellpath connected the bearer; false when it was connected before (by
    /// ModemManager, mbimcli, qmicli) and reused, which `bearer down` leaves connected.
    public var connectedByCellpath: Bool
    /// What disconnecting needs (the MBIM session, or the QMI client ID and packet data handle).
    public var handle: BearerHandle?
    /// What cellpath changed on the interface; nil until applied.
    public var addressing: AppliedAddressing?
    /// The QMAP mux id of the mux device (`interface`) that cellpath added for the bearer over
    /// the modem's net device; `bearer down` removes it.
    public var qmapMuxID: Int?
    /// When cellpath connected the bearer, or first found it connected (seconds since the epoch).
    public var since: Double
    /// The cellpath processes using the bearer now (checks, fetches): the last one out takes
    /// down a bearer cellpath connected, unless it is kept.
    public var users: [ProcessIdentity]
    /// The bearer stays up when its users are done: `bearer up` or `--keep-bearer` asked for it
    /// (until `bearer down`).
    public var kept: Bool
    /// What the last bring-up read of the path, so that a check can start on the bearer without
    /// asking the modem first (`RecordedBearer`): the bearer's DNS servers, the serving network
    /// (MCC-MNC) and the modem backend that found it. nil in records of earlier versions.
    public var dnsServers: [String]?
    public var servingNetwork: String?
    public var backend: String?

    public init(
        device: String? = nil, controlPort: String, protocol: String, interface: String, apn: String?,
        connectedByCellpath: Bool,
        handle: BearerHandle?, addressing: AppliedAddressing? = nil, since: Double,
        users: [ProcessIdentity] = [], kept: Bool = false
    ) {
        self.device = device
        self.controlPort = controlPort
        self.protocol = `protocol`
        self.interface = interface
        self.apn = apn
        self.connectedByCellpath = connectedByCellpath
        self.handle = handle
        self.addressing = addressing
        self.since = since
        self.users = users
        self.kept = kept
    }

    enum CodingKeys: String, CodingKey {
        case device, controlPort, `protocol`, interface, apn, connectedByCellpath, handle, addressing, since, users,
            kept
        case qmapMuxID, imei, dnsServers, servingNetwork, backend
    }

    /// Decodes records of earlier versions too: without users, and kept (as `bearer up` left
    /// them); without the device.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        device = try c.decodeIfPresent(String.self, forKey: .device)
        imei = try c.decodeIfPresent(String.self, forKey: .imei)
        controlPort = try c.decode(String.self, forKey: .controlPort)
        `protocol` = try c.decode(String.self, forKey: .protocol)
        interface = try c.decode(String.self, forKey: .interface)
        apn = try c.decodeIfPresent(String.self, forKey: .apn)
        connectedByCellpath = try c.decode(Bool.self, forKey: .connectedByCellpath)
        handle = try c.decodeIfPresent(BearerHandle.self, forKey: .handle)
        addressing = try c.decodeIfPresent(AppliedAddressing.self, forKey: .addressing)
        qmapMuxID = try c.decodeIfPresent(Int.self, forKey: .qmapMuxID)
        since = try c.decode(Double.self, forKey: .since)
        users = try c.decodeIfPresent([ProcessIdentity].self, forKey: .users) ?? []
        kept = try c.decodeIfPresent(Bool.self, forKey: .kept) ?? true
        dnsServers = try c.decodeIfPresent([String].self, forKey: .dnsServers)
        servingNetwork = try c.decodeIfPresent(String.self, forKey: .servingNetwork)
        backend = try c.decodeIfPresent(String.self, forKey: .backend)
    }

    /// Whether the bearer has IPv6 as cellpath set it up: its settings are then read too (QMI
    /// reads them on a second client, which a process that did not start the call must be told).
    public var hasIPv6: Bool { addressing?.addressing.ipv6 != nil || handle?.ipv6ClientID != nil }

    /// The users that still run; the others are dropped from the record.
    public mutating func dropEndedUsers() -> [ProcessIdentity] {
        let ended = users.filter { !$0.isAlive }
        users.removeAll { !$0.isAlive }
        return ended
    }
}

/// The directory of bearer records: `/run/cellpath` for root, `/run/cellpath/user-<uid>` for
/// another user (a capable `cellpath-modem` of the `cellpath` group's), or `CELLPATH_STATE_DIR`.
/// Only its owner may write there: the directory is 0700, the files 0600, and a record that
/// another user could have written, or that is not a regular file, is refused.
public struct BearerRecords: Sendable {
    public static let directoryVariable = "CELLPATH_STATE_DIR"
    public let directory: String

    public init(directory: String = BearerRecords.defaultDirectory) {
        self.directory = directory
    }

    public init(environment: [String: String]) {
        self.init(
            directory: environment[Self.directoryVariable].flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultDirectory)
    }

    /// Root's records in `/run/cellpath`; each other user's in a directory of their own below
    /// it (the directory is sticky for the group: no member can move another's aside).
    public static var defaultDirectory: String {
        let user = geteuid()
        return user == 0 ? "/run/cellpath" : "/run/cellpath/user-\(user)"
    }

    /// The file of the bearer of the modem at `device` (its physical device's sysfs path):
    /// `bearer-sys-devices-…-usb1-1-2.json`.
    public func path(device: String) -> String {
        "\(directory)/bearer-\(Self.fileName(device)).json"
    }

    /// The file of `modem`'s bearer, named by its physical device.
    public func path(for modem: DiscoveredModem) -> String { path(device: modem.devicePath) }

    /// Where earlier versions kept the bearer of `controlPort`: `bearer-dev-cdc-wdm0.json`.
    func legacyPath(_ controlPort: String) -> String {
        "\(directory)/bearer-\(Self.fileName(controlPort)).json"
    }

    /// The lock of `modem`'s bearer (`ModemLock`), named by its physical device: processes that
    /// name the modem by its old and its new ports take the same lock.
    public func lockPath(for modem: DiscoveredModem) -> String {
        "\(directory)/bearer-\(Self.fileName(modem.devicePath)).lock"
    }

    private static func fileName(_ path: String) -> String {
        path.split(separator: "/").joined(separator: "-")
    }

    /// The record of `modem`'s bearer; nil when there is none. A record of an earlier version
    /// (named by the control port) is moved to the modem's own name. A record of a modem that
    /// came back under other names takes them: its control port, and its interface when the old
    /// one is gone (the applied addressing keeps naming the old interface, where it was undone
    /// by the kernel but for the source rules). A record that cannot be read, is not cellpath's
    /// own (another owner, a link, readable by others) or is not one cellpath could have written
    /// for `modem` is moved aside and refused, never acted on.
    public func load(for modem: DiscoveredModem) throws(CellpathError) -> BearerRecord? {
        if var record = try load(at: path(for: modem), for: modem) {
            record.device = modem.devicePath  // saved under this name again, also when it did not say
            return record
        }
        let legacy = legacyPath(modem.ports[0].devicePath)
        guard var record = try load(at: legacy, for: modem) else { return nil }
        record.device = modem.devicePath
        try save(record)
        unlink(legacy)
        return record
    }

    /// The record at `path` for `modem`; with `movedFrom`, a record that names that device (gone
    /// now) and is taken as `modem`'s, which re-enumerated under its own device path.
    func load(
        at path: String, for modem: DiscoveredModem, movedFrom previousDevice: String? = nil
    ) throws(CellpathError) -> BearerRecord? {
        let refuse = { (reason: String) in self.refuse(path, reason, modem: modem.index) }
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            let error = SystemError("open \(path)")
            if error.code == ELOOP { throw refuse("it is a symbolic link") }
            throw CellpathError(error, kind: .noInput, hint: "bearer records live in \(directory)")
        }
        let descriptor = FileDescriptor(owning: fd)
        try checkDirectory()
        try checkOwnership(of: fd, path, modem: modem.index)
        let bytes: [UInt8]
        do {
            bytes = try IO.readAll(descriptor.rawValue, limit: 1 << 20)
        } catch {
            throw refuse("it cannot be read whole (\(error.reason))")
        }
        var record: BearerRecord
        do {
            record = try JSONDecoding.decode(BearerRecord.self, from: bytes)
        } catch {
            throw refuse("it is not a bearer record")
        }
        if let previousDevice {
            guard record.device == previousDevice else { return nil }
            record.device = modem.devicePath
        }
        if record.device == modem.devicePath { record.followRename(of: modem) }
        if let problem = record.problem(for: modem) { throw refuse(problem) }
        return record
    }

    /// Writes `record`, replacing the modem's one. Not synced to the disk: it describes the
    /// interface's configuration and the modem's call, which a reboot undoes as well.
    public func save(_ record: BearerRecord) throws(CellpathError) {
        let data: [UInt8]
        do {
            data = try JSONEncoding.encode(record)
        } catch {
            throw CellpathError(.internalError, "couldn't encode the bearer record: \(error)")
        }
        try prepareDirectory()
        do throws(SystemError) {
            try FileSystem.write(
                Array(data), to: record.device.map { path(device: $0) } ?? legacyPath(record.controlPort), mode: 0o600,
                durability: .untilReboot)
        } catch {
            throw CellpathError(
                error.code == EACCES || error.code == EPERM ? .permission : .cannotCreate,
                "couldn't record the bearer in \(directory): \(error.reason)",
                hint: "bearer records live in \(directory) (\(Self.directoryVariable) names another directory)")
        }
    }

    /// Forgets `modem`'s record (and one of an earlier version's name).
    public func remove(_ modem: DiscoveredModem) {
        unlink(path(for: modem))
        unlink(legacyPath(modem.ports[0].devicePath))
    }

    /// Creates the directory (0700) when it is missing, and checks that it is cellpath's own.
    func prepareDirectory() throws(CellpathError) {
        do throws(SystemError) {
            try FileSystem.makeDirectories(directory, mode: 0o700)
        } catch {
            throw CellpathError(
                error, kind: .cannotCreate,
                hint: "bearer records live in \(directory) (\(Self.directoryVariable) names another directory)")
        }
        try checkDirectory()
    }

    /// Refuses a directory that is a link, or that another user owns or may write.
    func checkDirectory() throws(CellpathError) {
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            throw CellpathError(SystemError("stat \(directory)"), kind: .noInput)
        }
        let problem: String? =
            if info.st_mode & S_IFMT != S_IFDIR {
                "it is not a directory (a symbolic link?)"
            } else if info.st_uid != geteuid() {
                "it belongs to user \(info.st_uid), not to \(geteuid())"
            } else if info.st_mode & 0o022 != 0 {
                "other users may write into it (mode \(String(info.st_mode & 0o777, radix: 8)))"
            } else {
                nil
            }
        if let problem {
            throw CellpathError(
                .permission, "refusing the bearer records' directory \(directory): \(problem)",
                hint:
                    "it must be owned by the user cellpath runs as, mode 0700: remove it, or name another with \(Self.directoryVariable)"
            )
        }
    }

    /// Refuses a file (open as `fd`) that is not a regular file of this user's, private to it.
    func checkOwnership(of fd: Int32, _ path: String, modem: Int) throws(CellpathError) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CellpathError(SystemError("stat \(path)"), kind: .noInput) }
        let problem: String? =
            if info.st_mode & S_IFMT != S_IFREG {
                "it is not a regular file"
            } else if info.st_uid != geteuid() {
                "it belongs to user \(info.st_uid), not to \(geteuid())"
            } else if info.st_mode & 0o077 != 0 {
                "other users may read or write it (mode \(String(info.st_mode & 0o777, radix: 8)))"
            } else {
                nil
            }
        if let problem { throw refuse(path, problem, modem: modem) }
    }

    /// Moves the refused record at `path` (of modem `modem`) aside (`.refused`) and says why and
    /// what to do.
    private func refuse(_ path: String, _ reason: String, modem: Int) -> CellpathError {
        let aside = "\(path).refused"
        let moved = rename(path, aside) == 0
        return CellpathError(
            .dataError, "refusing the bearer record \(path): \(reason)",
            hint: (moved ? "it was moved to \(aside); " : "")
                + "nothing was changed on its account. To remove what cellpath left on the modem's interface: cellpath bearer down --force -m \(modem)"
        )
    }

    /// Whether a record of `modem` was refused and moved aside.
    public func hasRefused(_ modem: DiscoveredModem) -> Bool {
        [path(for: modem), legacyPath(modem.ports[0].devicePath)].contains { FileSystem.exists($0 + ".refused") }
    }
}
