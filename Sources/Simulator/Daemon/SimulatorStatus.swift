import CellpathCore
import SimulatedModems
import SimulatorScenario

/// What `sim status` reports about one world. Personal data is full inside the daemon;
/// `redacted(_:)` masks it for output.
public struct SimulatorStatus: Sendable, Equatable, Codable {
    /// Whether the world runs.
    public enum State: String, Sendable, Codable {
        /// The daemon answers on its control socket.
        case up
        /// Nothing of the world exists.
        case down
        /// The daemon is gone but namespaces or files are left (`sim down` removes them).
        case stale
    }

    public var prefix: String
    public var state: State
    public var daemonPID: Int32?
    public var runDirectory: String
    /// The world's namespaces that exist.
    public var namespaces: [String]
    public var modems: [ModemStatus]
    /// The Wi-Fi link's relay counters (nil when the daemon is not up).
    public var wifi: LinkCounters?
    /// dnsmasq instances and hosted services.
    public var services: [ServiceStatus]

    public init(
        prefix: String, state: State, daemonPID: Int32? = nil, runDirectory: String,
        namespaces: [String] = [], modems: [ModemStatus] = [], wifi: LinkCounters? = nil,
        services: [ServiceStatus] = []
    ) {
        self.prefix = prefix
        self.state = state
        self.daemonPID = daemonPID
        self.runDirectory = runDirectory
        self.namespaces = namespaces
        self.modems = modems
        self.wifi = wifi
        self.services = services
    }

    /// The same status with SIM and modem identities masked unless `disclosure` is `.full`.
    public func redacted(_ disclosure: Disclosure) -> SimulatorStatus {
        var copy = self
        copy.modems = modems.map { modem in
            var m = modem
            m.imei = disclosure.reveal(modem.imei, as: .imei)
            m.sim = modem.sim.map {
                SIMIdentity(
                    iccid: disclosure.reveal($0.iccid, as: .iccid), imsi: disclosure.reveal($0.imsi, as: .imsi),
                    msisdn: disclosure.reveal($0.msisdn, as: .msisdn))
            }
            return m
        }
        return copy
    }
}

/// One simulated modem as `sim status` shows it.
public struct ModemStatus: Sendable, Equatable, Codable {
    public var index: Int
    public var `protocol`: ModemProtocol
    public var imei: String
    /// The device-side interface (`wwanN`) and its carrier-side peer (`radioN`).
    public var interface: String
    public var radioInterface: String
    public var sim: SIMIdentity?
    /// Serving network as MCC-MNC, and its name.
    public var operatorID: String
    public var operatorName: String
    /// Radio on or off, as the modem's clients (or the scenario) set it.
    public var radio: ModemControlStatus.Radio
    /// `home`, `roaming`, `searching`, `denied` or `deregistered` (also with the radio off or
    /// the SIM not ready).
    public var registration: ModemControlStatus.Registration
    /// Registered on a visited network.
    public var roaming: Bool
    /// PIN1: `disabled`, `required`, `verified` or `blocked`; absent without a SIM.
    public var pin: ModemControlStatus.PIN?
    public var pinAttemptsLeft: Int?
    /// The modem's control port (a pty symlink, like /dev/cdc-wdmN or /dev/wwanNmbim0) for
    /// mbimcli/qmicli/cellpath; empty when the device has none (router mode, the L850).
    public var controlPort: String
    public var bearer: BearerState
    /// The bearer's IPv4 address (set while connected with IPv4).
    public var address: String?
    /// The granted families, `ipv4`, `ipv6` or `ipv4v6` (set while connected).
    public var ipType: String?
    /// The bearer's IPv6 address as the modem reports it, and its /64 (set while connected with IPv6).
    public var ipv6Address: String?
    public var ipv6Prefix: String?
    public var counters: LinkCounters
}

/// A SIM's identities as `sim status` shows them.
public struct SIMIdentity: Sendable, Equatable, Codable {
    public var iccid: String
    public var imsi: String
    public var msisdn: String

    public init(iccid: String, imsi: String, msisdn: String) {
        self.iccid = iccid
        self.imsi = imsi
        self.msisdn = msisdn
    }
}

/// Whether a simulated bearer carries traffic.
public enum BearerState: String, Sendable, Codable {
    case connected, disconnected
}

/// A process or service the daemon runs.
public struct ServiceStatus: Sendable, Equatable, Codable {
    public var name: String
    public var running: Bool
    public var pid: Int32?
    /// Where it serves, e.g. `100.64.0.53:53 in cp-carrier`.
    public var detail: String?

    public init(name: String, running: Bool, pid: Int32? = nil, detail: String? = nil) {
        self.name = name
        self.running = running
        self.pid = pid
        self.detail = detail
    }
}
