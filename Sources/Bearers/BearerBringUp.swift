import CellpathCore
import Glibc
import IPConfiguration
import ModemDiscovery
import Modems
import SystemSupport

/// What a bring-up is asked for.
public struct BearerRequest: Sendable {
    public var settings: BearerSettings
    /// PIN1, entered when the SIM asks for it; never when fewer than 2 attempts are left.
    public var pin: String?
    /// When the whole bring-up must be done (waiting for registration included).
    public var deadline: ContinuousClock.Instant
    /// Who the bearer is for.
    public var use: BearerUse
    /// How long to wait for another cellpath process that is changing the modem's bearer.
    public var lockWait: Duration
    /// The SIM slot (from 1) to make active first (`--sim-slot`); nil: the active one.
    public var simSlot: Int?

    public init(
        settings: BearerSettings, pin: String? = nil, deadline: ContinuousClock.Instant, use: BearerUse,
        lockWait: Duration = BearerUse.defaultLockWait, simSlot: Int? = nil
    ) {
        self.settings = settings
        self.pin = pin
        self.deadline = deadline
        self.use = use
        self.lockWait = lockWait
        self.simSlot = simSlot
    }
}

/// Who a bearer is brought up for: `bearer up` keeps it for later commands; a check or a fetch
/// uses it while it runs (as one of the record's users), and keeps it afterwards only when
/// asked (`--keep-bearer`). The last user out takes down a bearer that is not kept.
public enum BearerUse: Sendable, Equatable {
    case keep
    case whileRunning(keepAfterwards: Bool)

    /// How long a command waits by default for another that changes the same modem's bearer.
    public static let defaultLockWait = Duration.seconds(60)
}

/// A bearer that is up, with its interface configured.
public struct BearerOutcome: Sendable {
    /// The path the HTTP engine binds to: interface, address, DNS, MTU, operator.
    public var path: CellularPath
    /// What the modem reports of the bearer (gateway, prefix, APN).
    public var bearer: BearerStatus
    public var registration: Registration
    /// True when the bearer was connected before this run (by cellpath or another program).
    public var reused: Bool
    /// What is recorded under /run/cellpath.
    public var record: BearerRecord
}

/// Brings a modem's bearer up as a sequence of steps, each logged with the modem's index,
/// cancellable and bounded by the request's deadline: SIM ready (PIN) → radio on → registered
/// (following indications) → packet service attached → reuse a connected bearer, or connect →
/// IP configuration → apply it to the interface → verify the address → confirm the bearer is
/// still up. On failure or cancellation, it undoes what this run did, newest first: the
/// addressing it applied, the bearer it connected, the radio it switched on. A bearer that was
/// connected before is reused as it is and never torn down here.
public struct BearerBringUp: Sendable {
    public let modem: DiscoveredModem
    public let records: BearerRecords
    public let logger: Logger
    /// Announces each step (the command's progress line).
    public let progress: @Sendable (String) -> Void
    /// Where the modem's net devices' attributes are (a QMI data path's `qmi/raw_ip`, `qmi/add_mux`).
    public let sysfsRoot: String

    public init(
        modem: DiscoveredModem, records: BearerRecords, logger: Logger,
        progress: @escaping @Sendable (String) -> Void = { _ in },
        sysfsRoot: String = DeviceRoots(environment: ProcessEnvironment.current()).sysfs
    ) {
        self.modem = modem
        self.records = records
        self.logger = logger
        self.progress = progress
        self.sysfsRoot = sysfsRoot
    }

    /// What to undo, newest last.
    private enum Change {
        case radioOn
        case connected(BearerHandle)
        case addressing(AppliedAddressing)
        /// A QMAP mux device added on the master interface.
        case mux(UInt8, master: String)
        /// The record as it was before this run (nil: there was none).
        case record(BearerRecord?)
    }

    /// Tells `backend` what the bring-up of `settings` will need, before its indications are
    /// followed: QMI readies those clients with the others.
    public func plan(_ settings: BearerSettings, on backend: any ModemBackend) async {
        let readsDataFormat =
            preparesQMIDataPath(backend) && modem.interfaces.first.map { dataPath($0).readsFirmwareFormat } == true
        await backend.plan(settings.ipType, readsDataFormat: readsDataFormat)
    }

    /// Runs the steps on `backend` (open on `modem`'s port), following its indications with
    /// `follower`. Throws the failing step's error after undoing; `.cancelled` when the task was.
    public func run(
        _ request: BearerRequest, on backend: any ModemBackend,
        following follower: IndicationFollower
    ) async throws(CellpathError) -> BearerOutcome {
        var changes: [Change] = []
        var step = "waiting for the modem's lock"
        let lock = try await ModemLock.acquire(
            modem, in: records, purpose: "bringing the bearer up",
            wait: request.lockWait
        ) { holder in
            logger.warning(
                "waiting for \(holder) to finish with modem \(modem.index)'s bearer (up to \(Int(request.lockWait.components.seconds)) s)"
            )
        }
        defer { lock.release() }
        do {
            if let slot = request.simSlot {
                step = "switching to SIM slot \(slot)"
                try await selectSIMSlot(slot, deadline: request.deadline, backend)
            }
            return try await steps(request, backend, follower, &changes, &step)
        } catch {
            let failure = Self.cellpathError(error, step: step)
            if failure.kind == .cancelled { logger.info("cancelled while \(step): undoing") }
            await undo(changes, backend)
            throw failure
        }
    }

    private func steps(
        _ request: BearerRequest, _ backend: any ModemBackend, _ follower: IndicationFollower,
        _ changes: inout [Change], _ step: inout String
    ) async throws -> BearerOutcome {
        guard let master = modem.interfaces.first else {
            throw CellpathError(
                .unavailable, "modem \(modem.index) (\(modem.ports[0].name)) has no network interface",
                hint: "its driver (cdc_mbim, qmi_wwan, mhi_wwan) did not create one: check dmesg")
        }
        // The interface the bearer's packets flow on: the master, or a QMAP session's mux device.
        var interface = master
        func begin(_ name: String) throws {
            try Task.checkCancellation()
            step = name
            progress(name)
        }

        // The first reads go out together: one round trip when all is well. What a later step
        // changes (the PIN, the radio) is read again. The IMEI, the record's second identity,
        // goes with them: read later, it was a round trip of its own (four for QMI).
        let seen = follower.count
        await backend.expect(request.settings.ipType)
        async let simRead = Self.result { () async throws(ModemError) in try await backend.simState() }
        async let imeiRead = Self.result { () async throws(ModemError) in try await backend.identity().imei }
        async let radioRead = Self.result { () async throws(ModemError) in try await backend.radio() }
        async let registrationRead = Self.result { () async throws(ModemError) in try await backend.registration() }
        async let packetServiceRead = Self.result { () async throws(ModemError) in try await backend.packetService() }
        async let bearerRead = Self.result { () async throws(ModemError) in try await backend.bearer() }
        // A QMI call's data path needs the firmware's data format; a connected bearer's is left alone.
        let readsDataFormat = preparesQMIDataPath(backend) && dataPath(master).readsFirmwareFormat
        async let dataFormatRead = Self.result { () async throws(ModemError) in
            readsDataFormat ? try await backend.dataFormat() : nil
        }

        try begin("checking the SIM")
        var changed = try await readySIM(await simRead.get(), request, backend)

        try begin("checking the radio")
        if try await radioRead.get() == .off {
            try begin("switching the radio on")
            changes.append(.radioOn)
            do {
                try await backend.setRadio(.on)
            } catch {
                if let locked = fccLock(refusing: error) { throw locked }
                throw error
            }
            logger.info("radio switched on")
            changed = true
        }

        try begin("waiting for registration")
        let firstRegistration = try await registrationRead.get(), firstPacketService = try await packetServiceRead.get()
        let registration = try await registered(
            request.deadline, backend, follower, first: changed ? nil : (firstRegistration, seen))
        let network = registration.servingOperator
        logger.info(
            "registered (\(registration.state.rawValue)) on \(network?.name ?? network?.id ?? "the network")\(registration.accessTechnology.map { ", \($0.rawValue)" } ?? "")"
        )

        try begin("waiting for the packet service")
        let fresh = !changed && firstRegistration.isRegistered  // else the packet service may have changed since
        try await attached(request.deadline, backend, follower, first: fresh ? (firstPacketService, seen) : nil)
        logger.info("packet service attached")
        // A QMI call needs its data path ready before it starts (the firmware's data format, a
        // QMAP mux bound): the data path of a connected bearer is left as it is.
        var prepared: QMIDataPath.Prepared?
        if preparesQMIDataPath(backend), try await bearerRead.get().state != .connected {
            try begin("preparing the data path")
            prepared = try await dataPath(master).prepare(backend, firmwareFormat: try await dataFormatRead.get())
            if let prepared, let muxID = prepared.muxID { changes.append(.mux(muxID, master: master)) }
            interface = prepared?.interface ?? master
        }
        // The IMEI's answer, awaited before the check clients go back.
        let imei = try? await imeiRead.get()
        // What only the checks needed goes back while the bearer connects (QMI: not at the end).
        async let checkClientsReleased: Void = backend.releaseCheckClients()

        try begin("looking for a connected bearer")
        var previous = try await records.load(for: modem) { imei }
        if let ended = previous?.dropEndedUsers() { BearerTeardown.reportEnded(ended, modem: modem, logger: logger) }
        var bearer = try await bearerRead.get()
        let reused = bearer.state == .connected
        var record: BearerRecord
        if reused {
            try checkAPN(request.settings.apn, bearer, previous)
            if let previous, previous.connectedByCellpath {
                record = previous
                interface = previous.interface
                logger.info("reusing the bearer that cellpath connected earlier")
            } else {
                if let named = bearer.dataInterface { interface = try dataInterface(named) }
                record =
                    previous
                    ?? BearerRecord(
                        device: modem.devicePath, controlPort: modem.ports[0].devicePath,
                        protocol: modem.protocol.rawValue, interface: interface,
                        apn: bearer.apn ?? request.settings.apn,
                        connectedByCellpath: false, handle: nil, since: Self.now)
                logger.info("reusing the bearer connected by another program (it stays up when cellpath is done)")
            }
        } else {
            guard bearer.state == .disconnected || bearer.state == .unknown else {
                throw CellpathError(
                    .temporary,
                    "modem \(modem.index)'s bearer is \(bearer.state.rawValue): another program is changing it",
                    hint: "retry in a moment")
            }
            if let previous {
                // The bearer went down without cellpath (dropped by the network): its addressing is
                // stale, and the client ID that started it still allocated.
                if let stale = previous.addressing {
                    for problem in InterfaceConfigurator().undo(stale) { logger.warning("\(problem)") }
                }
                if let mux = previous.qmapMuxID, let problem = dataPath(master).removeMux(UInt8(clamping: mux)) {
                    logger.warning("\(problem)")
                }
                if previous.connectedByCellpath, let handle = previous.handle, handle.holdsClientID {
                    do {
                        try await backend.disconnect(handle)
                    } catch {
                        logger.warning("\(error.message)")
                    }
                }
                records.remove(modem)
            }
            try begin("connecting")
            follower.clearDrop()
            changes.append(.record(nil))
            let connection = await Self.result { () async throws(ModemError) in
                try await backend.connect(request.settings)
            }
            if case .failure(let error) = connection, error.layer == .transport {
                // Sent but unanswered: the modem may have connected anyway.
                changes.append(.connected(BearerHandle()))
            }
            let handle = try connection.get()
            changes.append(.connected(handle))
            if let named = handle.dataInterface { interface = try dataInterface(named) }
            record = BearerRecord(
                device: modem.devicePath, controlPort: modem.ports[0].devicePath, protocol: modem.protocol.rawValue,
                interface: interface,
                apn: request.settings.apn, connectedByCellpath: true, handle: handle, since: Self.now)
            record.qmapMuxID = prepared?.muxID.map(Int.init)
            record.backend = backend.backendName.rawValue
            record.imei = imei.flatMap { BearerRecord.isIMEI($0) ? $0 : nil }
            record.adopt(request.use)
            try records.save(record)
            logger.info("bearer connected\(request.settings.apn.map { " on APN \($0)" } ?? "")")
            try begin("reading the IP configuration")
            bearer = try await backend.ipConfiguration()
        }
        await checkClientsReleased
        let wanted = request.settings.ipType
        if wanted.includesIPv6, let linkLocal = bearer.ipv6Address, Self.isLinkLocal(linkLocal) {
            try begin("waiting for a router advertisement on \(interface)")
            bearer = try await addressBySLAAC(bearer, linkLocal: linkLocal, interface: interface)
        }
        bearer = try BearerIPConfigurationCheck(
            modemIndex: modem.index, interface: interface, wanted: wanted,
            networks: InterfaceSnapshot.networks()
        ).checked(bearer) { logger.warning("\($0)") }
        let ipv4 = wanted.includesIPv4 ? bearer.ipv4Address : nil
        let ipv6 =
            wanted.includesIPv6
            ? bearer.ipv6Address.map {
                IPv6Addressing(
                    address: $0,
                    prefixLength: bearer.ipv6PrefixLength.flatMap { (1 ... 128).contains($0) ? $0 : nil } ?? 64,
                    gateway: bearer.ipv6Gateway)
            } : nil
        guard ipv4 != nil || ipv6 != nil else {
            let family = wanted == .ipv4 ? "IPv4" : wanted == .ipv6 ? "IPv6" : "IP"
            let granted = bearer.grantedIPType.map { " (it has \($0.rawValue) only)" } ?? ""
            throw CellpathError(
                .unavailable, "modem \(modem.index)'s bearer has no \(family) address\(granted)",
                hint: reused
                    ? "take it down (cellpath bearer down -m \(modem.index)) or ask for what it has (--ip-type)"
                    : "the network may not offer this address family on the APN: try --ip-type ipv4v6")
        }
        if record.apn == nil { record.apn = bearer.apn }
        if record.imei == nil { record.imei = imei.flatMap { BearerRecord.isIMEI($0) ? $0 : nil } }
        if reused { record.adopt(request.use) }
        // DNS servers of a family the path has no address of cannot be reached from it.
        let dns = bearer.dnsServers.filter { $0.contains(":") ? ipv6 != nil : ipv4 != nil }
        record.dnsServers = dns
        record.servingNetwork = network?.id
        record.backend = backend.backendName.rawValue

        try begin("configuring \(interface)")
        if reused { changes.append(.record(previous)) }
        let applied = try InterfaceConfigurator().apply(
            BearerAddressing(interface: interface, address: ipv4, ipv6: ipv6, mtu: bearer.mtu))
        changes.append(.addressing(applied))
        record.addressing = record.addressing.map { $0.merged(with: applied) } ?? applied
        try records.save(record)
        let configured = [ipv4.map { "\($0)/32" }, ipv6.map { "\($0.address)/\($0.prefixLength)" }].compactMap { $0 }
        logger.info(
            "\(interface) configured with \(configured.joined(separator: " and "))\(bearer.mtu.map { ", MTU \($0)" } ?? "")"
        )

        try begin("verifying \(interface)")
        // The configurator wrote the addresses in the kernel's text form.
        let addresses = [applied.addressing.address, applied.addressing.ipv6?.address].compactMap { $0 }
        for address in addresses where !InterfaceState.holds(address, on: interface) {
            throw CellpathError(
                .unavailable, "\(interface) does not hold \(address) after configuring it",
                hint: "another program (NetworkManager?) may manage \(interface): see docs/operations.md")
        }

        // The modem says so at once (an indication) if the network drops the bearer meanwhile.
        if let reason = follower.bearerDropped { throw Self.dropped(modem.index, reason) }
        logger.info("bearer up: \(interface) \(addresses.joined(separator: " ")), DNS \(dns.joined(separator: ", "))")
        let path = CellularPath(
            interfaceName: interface, ipv4Address: applied.addressing.address,
            ipv6Address: applied.addressing.ipv6?.address, dnsServers: dns, mtu: bearer.mtu,
            operatorID: network?.id, modemBackend: backend.backendName.rawValue,
            ipv6PrefixLength: applied.addressing.ipv6?.prefixLength, ipv6Gateway: applied.addressing.ipv6?.gateway)
        return BearerOutcome(path: path, bearer: bearer, registration: registration, reused: reused, record: record)
    }

    // MARK: Steps

    /// Whether the bring-up readies a QMI call's data path: not when the backend's connect does
    /// (ModemManager).
    private func preparesQMIDataPath(_ backend: any ModemBackend) -> Bool {
        modem.protocol == .qmi && !backend.preparesDataPath
    }

    /// The net device the backend named for the bearer's data, when it is the modem's (else
    /// refused): the master, or a link ModemManager multiplexes over it.
    private func dataInterface(_ named: String) throws -> String {
        let interface = try BearerInterface.named(named, of: modem, roots: DeviceRoots(sysfs: sysfsRoot))
        if interface != modem.interfaces.first { logger.info("the bearer carries data on \(interface)") }
        return interface
    }

    func dataPath(_ master: String) -> QMIDataPath {
        QMIDataPath(modemIndex: modem.index, sysfs: sysfsRoot, master: master, logger: logger)
    }

    /// SIM ready (`sim` as first read), with PIN1 entered when needed and safe; true when the
    /// PIN was entered.
    private func readySIM(
        _ first: SIMStatus, _ request: BearerRequest, _ backend: any ModemBackend
    ) async throws -> Bool {
        var sim = first
        let locked = sim.state == .pinRequired
        if locked {
            guard let pin = request.pin else {
                throw CellpathError(
                    .permission, "modem \(modem.index)'s SIM is locked by its PIN\(Self.attempts(sim.pinRetries))",
                    hint: "give the PIN in a file: --pin-file FILE")
            }
            guard let retries = sim.pinRetries, retries >= 2 else {
                throw CellpathError(
                    .permission,
                    "modem \(modem.index)'s SIM is locked by its PIN\(Self.attempts(sim.pinRetries)): cellpath does not spend a PIN attempt when fewer than 2 are left",
                    hint:
                        "enter the PIN by hand if you are sure of it (mmcli --pin, mbimcli --enter-pin, qmicli --dms-uim-verify-pin)"
                )
            }
            progress("entering the PIN")
            sim = try await backend.unlockSIM(pin: pin)
            logger.info("PIN accepted")
        }
        switch sim.state {
        case .ready:
            logger.info("SIM ready")
        case .absent, .esimWithoutProfile:
            throw await missingSIM(sim, backend)
        case .pinRequired:
            throw CellpathError(.permission, "modem \(modem.index)'s SIM is still locked after the PIN")
        case .pukRequired:
            throw CellpathError(
                .permission, "modem \(modem.index)'s SIM is blocked: it asks for its PUK",
                hint: "unblock it with the PUK from the operator (mmcli --puk), then retry")
        case .failed:
            throw CellpathError(.unavailable, "modem \(modem.index)'s SIM failed (bad or permanently blocked SIM)")
        case .notReady:
            throw CellpathError(
                .temporary, "modem \(modem.index)'s SIM is not ready yet", hint: "retry in a few seconds")
        }
        return locked
    }

    /// ` (3 attempts left)`, or nothing when the modem does not say.
    private static func attempts(_ retries: Int?) -> String {
        retries.map { " (\($0) attempt\($0 == 1 ? "" : "s") left)" }
            ?? " (the modem does not say how many attempts are left)"
    }

    /// Waits until the modem is registered, following its indications: a denial fails at once,
    /// searching past the deadline is a temporary failure.
    private func registered(
        _ deadline: ContinuousClock.Instant, _ backend: any ModemBackend, _ follower: IndicationFollower,
        first: (Registration, seen: Int)?
    ) async throws -> Registration {
        var first = first
        var shown: RegistrationState?
        while true {
            let seen = first?.seen ?? follower.count
            let registration: Registration
            if let known = first?.0 { registration = known } else { registration = try await backend.registration() }
            first = nil
            if registration.isRegistered { return registration }
            if registration.state == .denied {
                throw CellpathError(
                    .unavailable,
                    "modem \(modem.index)'s registration was denied by the network\(registration.networkError.map { " (\($0))" } ?? "")",
                    hint:
                        "the SIM may not be allowed on this network (roaming, barred, or not activated): ask the operator"
                )
            }
            if registration.state != shown {
                logger.info("not registered yet (\(registration.state.rawValue)): waiting for the network")
                shown = registration.state
            }
            guard try await waitForIndicationOrRecheck(after: seen, until: deadline, follower) else {
                throw CellpathError(
                    .temporary,
                    "modem \(modem.index) is not registered (\(registration.state.rawValue)) after waiting for it",
                    hint: "check the antenna and the coverage, or allow more time with --timeout")
            }
        }
    }

    /// Waits until the packet service is attached (asking an MBIM modem to attach once).
    private func attached(
        _ deadline: ContinuousClock.Instant, _ backend: any ModemBackend, _ follower: IndicationFollower,
        first: (PacketServiceState, seen: Int)?
    ) async throws {
        var asked = false
        var first = first
        while true {
            let seen = first?.seen ?? follower.count
            let state: PacketServiceState
            if let known = first?.0 { state = known } else { state = try await backend.packetService() }
            first = nil
            if state == .attached { return }
            if !asked && state == .detached {
                asked = true
                try await backend.attachPacketService()
                continue
            }
            guard try await waitForIndicationOrRecheck(after: seen, until: deadline, follower) else {
                throw CellpathError(
                    .temporary, "modem \(modem.index) is not attached to the packet service (\(state.rawValue))",
                    hint: "allow more time with --timeout, or check the SIM's data subscription")
            }
        }
    }

    /// How long a wait for the network trusts the indications alone before it reads the state
    /// again. A change can come without one: ModemManager publishes a modem's 3GPP interface
    /// (registration state, operator) only once its SIM is unlocked, and a QMI modem sends a
    /// call's indications to the client that started it.
    static let recheckInterval = Duration.seconds(1)

    /// Waits for an indication beyond the first `seen`, or `recheckInterval`, whichever comes
    /// first; false only when the deadline passed.
    private func waitForIndicationOrRecheck(
        after seen: Int, until deadline: ContinuousClock.Instant,
        _ follower: IndicationFollower
    ) async throws -> Bool {
        await follower.waitForIndication(after: seen, until: min(deadline, .now + Self.recheckInterval))
        try Task.checkCancellation()
        return follower.count > seen || ContinuousClock.now < deadline
    }

    /// Refuses to reuse a bearer connected on another APN than the one asked for.
    private func checkAPN(_ wanted: String?, _ bearer: BearerStatus, _ previous: BearerRecord?) throws {
        guard let wanted, let current = bearer.apn ?? previous?.apn, current.lowercased() != wanted.lowercased() else {
            return
        }
        throw CellpathError(
            .unavailable, "modem \(modem.index)'s bearer is connected on APN \(current), not \(wanted)",
            hint: "take it down first (cellpath bearer down --force -m \(modem.index)), or use --apn \(current)")
    }

    // MARK: Undo

    /// Undoes `changes`, newest first; a failure is logged and the rest still undone.
    private func undo(_ changes: [Change], _ backend: any ModemBackend) async {
        for change in changes.reversed() {
            switch change {
            case .addressing(let applied):
                let problems = InterfaceConfigurator().undo(applied)
                for problem in problems { logger.warning("\(problem)") }
                if problems.isEmpty { logger.info("undone: the configuration of \(applied.addressing.interface)") }
            case .connected(let handle):
                do {
                    try await backend.disconnect(handle == BearerHandle() ? nil : handle)
                    logger.info("undone: the bearer is disconnected")
                } catch {
                    logger.warning("couldn't disconnect the bearer this run connected: \(error.message)")
                }
            case .mux(let muxID, let master):
                if let problem = dataPath(master).removeMux(muxID) { logger.warning("\(problem)") }
            case .radioOn:
                do {
                    try await backend.setRadio(.off)
                    logger.info("undone: the radio is off again")
                } catch {
                    logger.warning("couldn't switch the radio off again: \(error.message)")
                }
            case .record(let previous):
                if let previous {
                    do throws(CellpathError) {
                        try records.save(previous)
                    } catch {
                        logger.warning("couldn't restore the bearer record: \(error.message)")
                    }
                } else {
                    records.remove(modem)
                }
            }
        }
    }

    // MARK: Errors

    static func dropped(_ index: Int, _ reason: String) -> CellpathError {
        CellpathError(
            .unavailable, "the network dropped modem \(index)'s bearer (\(reason))",
            hint: "retry; if it keeps dropping, check the coverage and the SIM's data subscription")
    }

    /// Any error of the steps as the command reports it.
    static func cellpathError(_ error: any Error, step: String) -> CellpathError {
        switch error {
        case let error as CellpathError: error
        case let error as ModemError where error.kind == .cancelled:
            CellpathError(.cancelled, "cancelled while \(step)")
        case let error as ModemError: error.cellpathError
        case is CancellationError: CellpathError(.cancelled, "cancelled while \(step)")
        default: CellpathError(.internalError, "internal error while \(step): \(error)")
        }
    }

    /// The outcome of `body` as a value.
    static func result<Value>(_ body: () async throws(ModemError) -> Value) async -> Result<Value, ModemError> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

extension BearerRecord {
    /// Takes in this run's use: a user while it runs, and kept when asked.
    mutating func adopt(_ use: BearerUse) {
        switch use {
        case .keep:
            kept = true
        case .whileRunning(let keepAfterwards):
            kept = kept || keepAfterwards
            let me = ProcessIdentity.current
            if !users.contains(me) { users.append(me) }
        }
    }
}

extension AppliedAddressing {
    /// What two runs changed together: this run's record of changes, with `later`'s additions.
    func merged(with later: AppliedAddressing) -> AppliedAddressing {
        var merged = self
        merged.broughtUp = broughtUp || later.broughtUp
        merged.previousMTU = previousMTU ?? later.previousMTU
        merged.addedAddress = addedAddress || later.addedAddress
        merged.addedTableRoute = addedTableRoute || later.addedTableRoute
        merged.addedRule = addedRule || later.addedRule
        merged.addedMainRouteMetric = addedMainRouteMetric ?? later.addedMainRouteMetric
        merged.previousRPFilter = previousRPFilter ?? later.previousRPFilter
        merged.addedIPv6Address = addedIPv6Address || later.addedIPv6Address
        merged.addedIPv6TableRoute = addedIPv6TableRoute || later.addedIPv6TableRoute
        merged.addedIPv6Rule = addedIPv6Rule || later.addedIPv6Rule
        merged.addedIPv6MainRouteMetric = addedIPv6MainRouteMetric ?? later.addedIPv6MainRouteMetric
        merged.previousDisableIPv6 = previousDisableIPv6 ?? later.previousDisableIPv6
        if merged.addressing.ipv6 == nil { merged.addressing.ipv6 = later.addressing.ipv6 }
        if merged.addressing.address == nil { merged.addressing.address = later.addressing.address }
        return merged
    }
}
