import CellpathCore
import Glibc
import GLibRuntime
import ModemDiscovery

/// One open session with a modem's control port, in the modem's protocol (MBIM or QMI). Each
/// read is one or a few requests; a protocol status that describes a state (no SIM, SIM locked,
/// radio off, not registered) is returned as that state, not thrown. Implementations run on
/// `GLibActor`.
public protocol ModemBackend: AnyObject, Sendable {
    var port: ControlPort { get }
    /// Manufacturer, model, firmware and IMEI, as far as the protocol tells them.
    func identity() async throws(ModemError) -> ModemIdentity
    func sim() async throws(ModemError) -> SIMStatus
    func radio() async throws(ModemError) -> RadioState
    /// The SIM's home network; nil when the SIM cannot tell (absent, locked).
    func homeOperator() async throws(ModemError) -> NetworkOperator?
    func registration() async throws(ModemError) -> Registration
    /// Nil without service.
    func signal() async throws(ModemError) -> Signal?
    func packetService() async throws(ModemError) -> PacketServiceState
    /// The default bearer (MBIM session 0, the QMI packet data call) and its IP configuration.
    func bearer() async throws(ModemError) -> BearerStatus
    /// Releases what the session holds (QMI client IDs) and closes the port, also when the
    /// task is cancelled. Sends nothing that changes the modem's state: no MBIM CLOSE, which
    /// deactivates the contexts on many modems.
    func close() async
}

/// What a modem says it is.
public struct ModemIdentity: Sendable, Equatable {
    public var manufacturer: String?
    public var model: String?
    public var firmware: String?
    public var imei: String?

    public init(manufacturer: String? = nil, model: String? = nil, firmware: String? = nil, imei: String? = nil) {
        self.manufacturer = manufacturer
        self.model = model
        self.firmware = firmware
        self.imei = imei
    }
}

/// How cellpath reaches a modem's control port.
public struct ModemAccess: Sendable, Equatable {
    /// Open the port through mbim-proxy / qmi-proxy (started on demand, as ModemManager uses
    /// them), so that cellpath shares the port with ModemManager, `mbimcli -p` and `qmicli -p`;
    /// else open the port directly.
    public var useProxy: Bool
    /// Whether this process runs as root. Debian's proxies accept root clients only: as
    /// another user, the port is opened directly.
    public var isRoot: Bool
    /// How long a session may take, from opening the port to the last answer.
    public var timeout: Duration

    public init(useProxy: Bool = true, isRoot: Bool = geteuid() == 0, timeout: Duration = .seconds(10)) {
        self.useProxy = useProxy
        self.isRoot = isRoot
        self.timeout = timeout
    }

    /// Whether the port is opened through its protocol's proxy.
    public var proxied: Bool { useProxy && isRoot }
}

/// Opens modems with the backend of their protocol.
public enum ModemBackends {
    /// Opens `port` (MBIM through libmbim, QMI through libqmi in QMI mode), through the proxy
    /// when `access` says so. A port that may not be opened is a permission error (77).
    @GLibActor
    public static func open(_ port: ControlPort, access: ModemAccess, logger: Logger) async throws(ModemError) -> any ModemBackend {
        let session = ModemSession(port: port, timeout: access.timeout, logger: logger, proxied: access.proxied)
        if access.useProxy && !access.isRoot {
            logger.debug("\(port.protocol == .mbim ? "mbim-proxy" : "qmi-proxy") accepts root clients only: opening \(port.devicePath) directly")
        }
        if !access.proxied { try checkAccess(session) }
        switch port.protocol {
        case .mbim: return try await MBIMModem.open(session, proxy: access.proxied)
        case .qmi: return try await QMIModem.open(session, proxy: access.proxied)
        }
    }

    /// Refuses a port that this process may not open (before the library tries and reports it
    /// less precisely).
    static func checkAccess(_ session: ModemSession) throws(ModemError) {
        let path = session.port.devicePath
        guard access(path, R_OK | W_OK) != 0 else { return }
        let code = errno
        let operation = "open \(path)"
        switch code {
        case EACCES, EPERM:
            throw ModemError(.transport, .permission, operation: operation, reason: "permission denied",
                             hint: "run as root (sudo), or give your user read and write access to the port (its group)")
        case ENOENT:
            throw ModemError(.transport, .unavailable, operation: operation, reason: "no such device (the modem was unplugged?)",
                             hint: "list the modems again: cellpath modems")
        default:
            throw ModemError(.transport, .unavailable, operation: operation, reason: String(cString: strerror(code)))
        }
    }
}
