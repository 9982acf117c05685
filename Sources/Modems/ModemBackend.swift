import CellpathCore
import GLibRuntime
import Glibc
import ModemDiscovery

/// One open session with a modem's control port, in the modem's protocol (MBIM or QMI). Each
/// read is one or a few requests; a protocol status that describes a state (no SIM, SIM locked,
/// radio off, not registered) is returned as that state, not thrown. Implementations run on
/// `GLibActor`.
public protocol ModemBackend: AnyObject, Sendable {
    var port: ControlPort { get }
    /// Who serves the calls: the port (directly or through its proxy), or ModemManager.
    var backendName: ModemBackendName { get }
    /// Whether `connect` readies the data path itself, so that a bring-up must leave the
    /// firmware's data format and the kernel's framing alone: ModemManager aligns them when it
    /// connects and keeps what it set, so a change behind its back would drop every packet.
    var preparesDataPath: Bool { get }
    /// Manufacturer, model, firmware and IMEI, as far as the protocol tells them.
    func identity() async throws(ModemError) -> ModemIdentity
    func sim() async throws(ModemError) -> SIMStatus
    /// The SIM's state and PIN retries, with as few requests as the protocol allows (identities
    /// only where they come with it): what bringing a bearer up checks.
    func simState() async throws(ModemError) -> SIMStatus
    func radio() async throws(ModemError) -> RadioState
    /// The SIM's home network; nil when the SIM cannot tell (absent, locked).
    func homeOperator() async throws(ModemError) -> NetworkOperator?
    func registration() async throws(ModemError) -> Registration
    /// Nil without service.
    func signal() async throws(ModemError) -> Signal?
    func packetService() async throws(ModemError) -> PacketServiceState
    /// The radio now: technology, serving network and cell, signal, as far as the modem tells
    /// them (a check records it while its check_url chain runs).
    func radioContext() async throws(ModemError) -> RadioContext
    /// A GNSS fix (`--location`), waiting at most `bound` for one; `.noFix` with the reason when
    /// the modem has none or no receiver it offers (MBIM has no standard GNSS service).
    func gnssFix(within bound: Duration) async throws(ModemError) -> GNSSReading
    /// The default bearer (MBIM session 0, the QMI packet data call) and its IP configuration.
    func bearer() async throws(ModemError) -> BearerStatus
    /// The default bearer's state alone (one request).
    func bearerState() async throws(ModemError) -> BearerState
    /// The IP configuration of the connected default bearer, without asking for its state.
    func ipConfiguration() async throws(ModemError) -> BearerStatus
    /// Tells which families the bearer is expected to have (the bring-up's request), before
    /// reading it: QMI then reads the IPv6 settings too, on a WDS client of IP family 6. MBIM
    /// and ModemManager report both families in one read and ignore it.
    func expect(_ ipType: BearerIPType) async
    /// Tells, before `indications()`, what a bring-up will need beside the reads: the families
    /// (as `expect`) and whether it reads the firmware's data format. QMI then allocates the
    /// IPv6 WDS client and the WDA client with the others (one round trip) and sets the IPv6
    /// client's IP family with the first reads. The others: `expect` alone.
    func plan(_ ipType: BearerIPType, readsDataFormat: Bool) async
    /// QMI: the firmware's data format (WDA Get Data Format); nil where the modem has no WDA
    /// service, and for the protocols without one (MBIM, ModemManager).
    func dataFormat() async throws(ModemError) -> DataFormat?
    /// QMI: asks the firmware for `format` (WDA Set Data Format, QMAP with `port`'s endpoint)
    /// and returns the format it then has; firmware may keep parts of its own. Nil where there
    /// is no WDA service.
    func setDataFormat(_ format: DataFormat, endpoint port: MuxDataPort?) async throws(ModemError) -> DataFormat?
    /// QMI QMAP: the WDS clients that `connect` starts calls on are first bound to `port`.
    func bind(to port: MuxDataPort) async
    /// What the firmware negotiated or refuses (MBIMEx version, QMI data format, DMS UIM), for a
    /// device capture; after the SIM was read, so that a refused DMS UIM command is known.
    func firmwareTraits() async throws(ModemError) -> FirmwareTraits
    /// The SIM slots, numbered from 1; empty when the modem has one slot or does not report them.
    func simSlots() async throws(ModemError) -> [SIMSlot]
    /// Makes slot `number` (from 1) the active one: the modem drops its bearer and reads the
    /// card in that slot, whose state `simState()` tells once it is ready.
    func switchSIMSlot(to number: Int) async throws(ModemError)

    // Changes, for bringing a bearer up and down.

    /// Enters PIN1 and returns the SIM's state after it. A PIN the SIM refuses is a protocol
    /// error of kind `.permission` that says how many attempts are left.
    func unlockSIM(pin: String) async throws(ModemError) -> SIMStatus
    /// Switches the (software) radio on or off. In a cancelled task, or past the session's
    /// deadline (undoing), it runs with a clean-up time of its own.
    func setRadio(_ state: RadioState) async throws(ModemError)
    /// Asks the modem to attach to the packet service (MBIM); QMI modems attach by themselves
    /// once registered, so this does nothing there.
    func attachPacketService() async throws(ModemError)
    /// Connects the default bearer with `settings` (its IP type: IPv4, IPv6 or dual stack, of
    /// which the network grants what it allows) and returns what disconnecting it needs. Once sent, the request is not given up when the task is cancelled: the modem may
    /// carry it out, and a bearer connected must be known to be undone. A refusal by the network
    /// is a protocol error whose reason names the network's cause. QMI: the WDS client that
    /// started the call is kept (its ID stays allocated after `close()`), since releasing it
    /// ends the call on many modems; `disconnect` releases it.
    func connect(_ settings: BearerSettings) async throws(ModemError) -> BearerHandle
    /// Disconnects the bearer that `handle` names (from this session's `connect` or from the
    /// record of an earlier run) and gives back what the handle holds (the QMI client ID), or
    /// with nil whatever bearer is connected (`--force`; QMI cannot stop a call without its
    /// handle, which only the program that started it knows). Runs with a time of its own
    /// (`ModemSession.cleanupTimeout`), also when the task is cancelled: it is what undoing
    /// calls. A bearer already down is no error: returns true when a bearer was connected and
    /// is now down, false when it was down already.
    @discardableResult
    func disconnect(_ handle: BearerHandle?) async throws(ModemError) -> Bool
    /// Gives back what only the checks before connecting needed (QMI: the DMS and NAS client
    /// IDs), while the bearer connects, instead of at `close()`; a later read allocates its
    /// client again. MBIM: nothing.
    func releaseCheckClients() async
    /// Starts the session's time limit again from now: for sessions that last (`bearer status
    /// --watch`, the path of a fetch) and talk to the modem now and then.
    func renewTimeLimit() async
    /// Starts following the modem's indications (registration, packet service, the bearer)
    /// and returns them as they arrive, until `close()`. Call once per session.
    func indications() async throws(ModemError) -> AsyncStream<ModemIndication>
    /// Follows, in the stream of `indications()` (call that first), the bearer that `handle`
    /// names (the record of the run that connected it; nil: none known), and tells how far the
    /// indications now follow bearers.
    func followBearer(_ handle: BearerHandle?) async -> BearerFollowing
    /// Releases what the session holds (QMI client IDs) and closes the port, also when the
    /// task is cancelled. Sends nothing that changes the modem's state: no MBIM CLOSE, which
    /// deactivates the contexts on many modems.
    func close() async
}

/// What disconnecting a bearer needs, also in another process (it is kept in the bearer's
/// record): the MBIM session, the QMI WDS client ID that started the call (left allocated)
/// and the call's packet data handle, or ModemManager's bearer object.
public struct BearerHandle: Sendable, Equatable, Codable {
    /// MBIM: the session ID of the context (0, the default bearer).
    public var sessionID: Int?
    /// QMI: the WDS client ID that started the call.
    public var clientID: Int?
    /// QMI: the call's packet data handle.
    public var packetDataHandle: UInt32?
    /// QMI dual stack: the WDS client ID and packet data handle of the IPv6 call (the first pair
    /// is the IPv4 call's; an IPv6-only bearer has its call in the first pair).
    public var ipv6ClientID: Int?
    public var ipv6PacketDataHandle: UInt32?
    /// ModemManager: the D-Bus path of the bearer object that cellpath created.
    public var bearerPath: String?
    /// ModemManager: the net device its bearer carries data on (its `Interface`): the modem's
    /// master, or a link ModemManager multiplexes over it (`qmimux0`, `wwan0.1`); nil when it
    /// named none.
    public var dataInterface: String?

    /// Whether the handle holds something in the modem (a QMI client ID) that `disconnect` gives
    /// back, also after the network ended the call.
    public var holdsClientID: Bool { clientID != nil || ipv6ClientID != nil }

    public init(
        sessionID: Int? = nil, clientID: Int? = nil, packetDataHandle: UInt32? = nil, bearerPath: String? = nil,
        ipv6ClientID: Int? = nil, ipv6PacketDataHandle: UInt32? = nil, dataInterface: String? = nil
    ) {
        self.sessionID = sessionID
        self.clientID = clientID
        self.packetDataHandle = packetDataHandle
        self.bearerPath = bearerPath
        self.ipv6ClientID = ipv6ClientID
        self.ipv6PacketDataHandle = ipv6PacketDataHandle
        self.dataInterface = dataInterface
    }
}

extension ModemBackend {
    /// The direct backends leave the data path to the bring-up.
    public var preparesDataPath: Bool { false }
    /// Backends that read both families at once need no hint.
    public func expect(_ ipType: BearerIPType) async {}
    /// Backends that allocate nothing per service only take the families in.
    public func plan(_ ipType: BearerIPType, readsDataFormat: Bool) async { await expect(ipType) }
    /// Only QMI has a data format of its own.
    public func dataFormat() async throws(ModemError) -> DataFormat? { nil }
    public func setDataFormat(
        _ format: DataFormat, endpoint port: MuxDataPort?
    ) async throws(ModemError)
        -> DataFormat?
    { nil }
    public func bind(to port: MuxDataPort) async {}

    /// Backends without a GNSS receiver to ask have no fix.
    public func gnssFix(within bound: Duration) async throws(ModemError) -> GNSSReading {
        .noFix("\(backendName.rawValue) offers no GNSS fix")
    }

    /// Backends that read no firmware traits (ModemManager) report none.
    public func firmwareTraits() async throws(ModemError) -> FirmwareTraits { FirmwareTraits() }

    /// Backends without slot support report none.
    public func simSlots() async throws(ModemError) -> [SIMSlot] { [] }

    /// Backends without slot support (they report no slots) refuse.
    public func switchSIMSlot(to number: Int) async throws(ModemError) {
        throw ModemError(
            .protocol, .unavailable, operation: "switch to SIM slot \(number) of \(port.name)",
            reason: "cellpath cannot switch SIM slots through \(backendName.rawValue)")
    }
}

/// How far a session's indications follow the default bearer (`followBearer`).
public enum BearerFollowing: Sendable, Equatable {
    /// Every change of any bearer (MBIM: connect indications reach every client).
    case everyChange
    /// The followed bearer until it goes down (QMI: a call's indications go to the client
    /// that started it, whose ID the session listens on too; a later call's go to its own).
    case untilDown
    /// None: changes are seen only when read again (a QMI call that another program started).
    case none
}

/// A change the modem announced on its own (an MBIM indication, a QMI indication).
public enum ModemIndication: Sendable, Equatable {
    case registration(Registration)
    case packetService(PacketServiceState)
    /// The default bearer's new state; `reason` is the network's, when it gave one
    /// (`regular-deactivation`).
    case bearer(BearerState, reason: String?)
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

/// Opens a modem's backend for its control port: the direct one of its protocol
/// (`ModemBackends.direct`), or another program's (ModemManager).
public typealias ModemOpener = @Sendable (ControlPort, ModemAccess, Logger) async throws(ModemError) -> any ModemBackend

/// Opens modems with the backend of their protocol.
public enum ModemBackends {
    /// `open`, as a `ModemOpener`.
    public static let direct: ModemOpener = { port, access, logger throws(ModemError) in
        try await open(port, access: access, logger: logger)
    }

    /// Opens `port` (MBIM through libmbim, QMI through libqmi in QMI mode), through the proxy
    /// when `access` says so. A port that may not be opened is a permission error (77).
    @GLibActor
    public static func open(
        _ port: ControlPort, access: ModemAccess, logger: Logger
    ) async throws(ModemError) -> any ModemBackend {
        let session = ModemSession(port: port, timeout: access.timeout, logger: logger, proxied: access.proxied)
        if access.useProxy && !access.isRoot {
            logger.debug(
                "\(port.protocol == .mbim ? "mbim-proxy" : "qmi-proxy") accepts root clients only: opening \(port.devicePath) directly"
            )
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
            throw ModemError(
                .transport, .permission, operation: operation, reason: "permission denied",
                hint: "run as root (sudo), or give your user read and write access to the port (its group): "
                    + "the cellpath group of the udev rules, SupplementaryGroups=cellpath in a systemd unit "
                    + "(docs/operations.md)")
        case ENOENT:
            throw ModemError(
                .transport, .unavailable, operation: operation, reason: "no such device (the modem was unplugged?)",
                hint: "list the modems again: cellpath modems")
        default:
            throw ModemError(.transport, .unavailable, operation: operation, reason: String(cString: strerror(code)))
        }
    }
}
