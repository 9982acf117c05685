import CellpathCore
import FoundationEssentials
import Glibc
import IPConfiguration
import Modems
import SystemSupport

/// What cellpath knows about a modem's bearer across processes: whether it connected it (then
/// `bearer down` disconnects it), what disconnecting needs, and the addressing it applied (so
/// that exactly that is undone). One JSON file per control port under `/run/cellpath/`.
public struct BearerRecord: Sendable, Equatable, Codable {
    /// The modem's control port (device path) and protocol, as discovery found them.
    public var controlPort: String
    public var `protocol`: String
    public var interface: String
    public var apn: String?
    /// True when cellpath connected the bearer; false when it was connected before (by
    /// ModemManager, mbimcli, qmicli) and reused, which `bearer down` leaves connected.
    public var connectedByCellpath: Bool
    /// What disconnecting needs (the MBIM session, or the QMI client ID and packet data handle).
    public var handle: BearerHandle?
    /// What cellpath changed on the interface; nil until applied.
    public var addressing: AppliedAddressing?
    /// When cellpath connected the bearer, or first found it connected (seconds since the epoch).
    public var since: Double

    public init(controlPort: String, protocol: String, interface: String, apn: String?, connectedByCellpath: Bool,
                handle: BearerHandle?, addressing: AppliedAddressing? = nil, since: Double) {
        self.controlPort = controlPort
        self.protocol = `protocol`
        self.interface = interface
        self.apn = apn
        self.connectedByCellpath = connectedByCellpath
        self.handle = handle
        self.addressing = addressing
        self.since = since
    }

    /// Whether the bearer has IPv6 as cellpath set it up: its settings are then read too (QMI
    /// reads them on a second client, which a process that did not start the call must be told).
    public var hasIPv6: Bool { addressing?.addressing.ipv6 != nil || handle?.ipv6ClientID != nil }
}

/// The directory of bearer records: `/run/cellpath`, or `CELLPATH_STATE_DIR`. Only root (or
/// the capability's owner) writes there; the files are 0600, the directory 0700.
public struct BearerRecords: Sendable {
    public static let directoryVariable = "CELLPATH_STATE_DIR"
    public let directory: String

    public init(directory: String = "/run/cellpath") {
        self.directory = directory
    }

    public init(environment: [String: String]) {
        self.init(directory: environment[Self.directoryVariable].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/cellpath")
    }

    /// The file of the bearer of `controlPort`: `bearer-dev-cdc-wdm0.json`.
    public func path(_ controlPort: String) -> String {
        let name = controlPort.split(separator: "/").joined(separator: "-")
        return "\(directory)/bearer-\(name).json"
    }

    /// The record of `controlPort`'s bearer, if there is a readable one.
    public func load(_ controlPort: String) -> BearerRecord? {
        guard let bytes = try? FileSystem.read(path(controlPort), limit: 1 << 20) else { return nil }
        return try? JSONDecoder().decode(BearerRecord.self, from: Data(bytes))
    }

    public func save(_ record: BearerRecord) throws(CellpathError) {
        let data: Data
        do {
            data = try JSONEncoder().encode(record)
        } catch {
            throw CellpathError(.internalError, "couldn't encode the bearer record: \(error)")
        }
        do throws(SystemError) {
            try FileSystem.makeDirectories(directory, mode: 0o700)
            try FileSystem.write(Array(data), to: path(record.controlPort), mode: 0o600)
        } catch {
            throw CellpathError(error.code == EACCES || error.code == EPERM ? .permission : .cannotCreate,
                                "couldn't record the bearer in \(directory): \(error.reason)",
                                hint: "bearer records live in \(directory) (\(Self.directoryVariable) names another directory)")
        }
    }

    public func remove(_ controlPort: String) {
        unlink(path(controlPort))
    }
}
