import CellpathCore
import IPConfiguration
import ModemDiscovery
import Modems
import SystemSupport

/// The cellular path from the modem layer (`fetch --modem`): reuses a connected bearer or brings
/// one up (`BearerBringUp`), follows the modem's indications while the path is in use (a bearer
/// the network drops marks the path down at once, with the network's reason), and on `release()`
/// gives up its use of the bearer: the last cellpath process using a bearer that cellpath
/// connected takes it down, unless it is kept (`bearer up`, `--keep-bearer`). Without
/// CAP_NET_ADMIN it changes nothing: it uses a bearer that is up with its address on the
/// interface, or fails with 77.
public actor ModemPathProvider: CellularPathProvider {
    /// What the provider is asked for.
    public struct Options: Sendable {
        public var settings: BearerSettings
        public var access: ModemAccess
        /// Leave a bearer that this run brought up connected (`--keep-bearer`).
        public var keepBearer: Bool
        /// Opens the modem's backend (`--backend`).
        public var opener: ModemOpener
        /// How long to wait for another cellpath process changing the modem's bearer (`--wait`).
        public var lockWait: Duration
        /// The SIM slot to make active first (`--sim-slot`); nil: the active one.
        public var simSlot: Int?
        /// Take a bearer that cellpath's record says is up, and the kernel agrees, as the path at
        /// once, and ask the modem beside the run (`confirmPath`): for callers that confirm (the
        /// checks' `CheckRunner`).
        public var startsOnRecordedBearer: Bool

        public init(
            settings: BearerSettings, access: ModemAccess, keepBearer: Bool,
            opener: @escaping ModemOpener = ModemBackends.direct,
            lockWait: Duration = BearerUse.defaultLockWait, simSlot: Int? = nil, startsOnRecordedBearer: Bool = false
        ) {
            self.settings = settings
            self.access = access
            self.keepBearer = keepBearer
            self.opener = opener
            self.lockWait = lockWait
            self.simSlot = simSlot
            self.startsOnRecordedBearer = startsOnRecordedBearer
        }
    }

    private let options: Options
    private let records: BearerRecords
    private let logger: Logger
    private let progress: @Sendable (String) -> Void
    /// Picks the modem (`-m`, or the only one).
    private let chooseModem: @Sendable () async throws -> DiscoveredModem
    private var backend: (any ModemBackend)?
    private var modem: DiscoveredModem?
    private var outcome: BearerOutcome?
    private var follower: IndicationFollower?
    /// Set once `release()` starts: the bearer's end is then this run's doing.
    private var releasing = false
    /// The recorded bearer this run started on without asking the modem, and the modem's
    /// confirmation of it, under way beside the run: nil when the bearer is up as recorded.
    private var recorded: RecordedBearer?
    private var confirmation: Task<Confirmation, Never>?

    /// What the modem said of a recorded bearer beside the run.
    private struct Confirmation: Sendable {
        /// Why the bearer is not up as recorded; nil when it is.
        var lost: CellpathError?
        /// The network it serves on now, when it told.
        var servingNetwork: String?
    }

    public init(
        options: Options, records: BearerRecords, logger: Logger,
        progress: @escaping @Sendable (String) -> Void = { _ in },
        chooseModem: @escaping @Sendable () async throws -> DiscoveredModem
    ) {
        self.options = options
        self.records = records
        self.logger = logger
        self.progress = progress
        self.chooseModem = chooseModem
    }

    /// The network's reason once it dropped the bearer while the path was in use.
    public var lostReason: String? { follower?.bearerDropped }

    public func cellularPath() async throws(CellpathError) -> CellularPath {
        releasing = false
        let modem = try await modemChosen()
        self.modem = modem
        let logger = self.logger.scoped("modem\(modem.index)")
        if let recorded = try await recordedBearer(of: modem, logger: logger) {
            self.recorded = recorded
            logger.info(
                "modem \(modem.index)'s bearer is up on \(recorded.path.interfaceName) as cellpath's record says and the kernel holds: the check starts on it now, and the modem confirms it beside"
            )
            confirmation = Task { await self.confirm(recorded, of: modem, logger: logger) }
            return recorded.path
        }
        let backend = try await open(modem, logger: logger)
        do {
            let bringUp = BearerBringUp(modem: modem, records: records, logger: logger, progress: progress)
            let bringsUp = Capability.netAdmin.isEffective
            if bringsUp { await bringUp.plan(options.settings, on: backend) }
            let follower = try await follow(backend, logger: logger)
            guard bringsUp else { return try await existingPath(modem, backend) }
            let deadline = ContinuousClock.now + options.access.timeout
            let request = BearerRequest(
                settings: options.settings, deadline: deadline,
                use: .whileRunning(keepAfterwards: options.keepBearer), lockWait: options.lockWait,
                simSlot: options.simSlot)
            let outcome = try await bringUp.run(request, on: backend, following: follower)
            self.outcome = outcome
            return outcome.path
        } catch {
            await close()
            throw BearerBringUp.cellpathError(error, step: "bringing the bearer up")
        }
    }

    /// Opens `modem`'s backend for this run.
    private func open(_ modem: DiscoveredModem, logger: Logger) async throws(CellpathError) -> any ModemBackend {
        do {
            let backend = try await options.opener(modem.ports[0], options.access, logger)
            logger.info(
                "through \(backend.backendName == .modemManager ? "ModemManager" : "the \(backend.backendName.rawValue.uppercased()) port")"
            )
            self.backend = backend
            return backend
        } catch {
            throw BearerBringUp.cellpathError(error, step: "opening the modem")
        }
    }

    /// Follows `backend`'s indications while the path is in use: a bearer the network drops
    /// takes the path down at once.
    private func follow(_ backend: any ModemBackend, logger: Logger) async throws -> IndicationFollower {
        let follower = IndicationFollower(try await backend.indications()) { indication in
            logger.debug("indication: \(indication)")
            if case .bearer(let state, let reason) = indication, state == .disconnected {
                Task { await self.bearerDropped(reason: reason, logger: logger) }
            }
        }
        self.follower = follower
        return follower
    }

    /// The bearer cellpath's record says is up, with this run taken in as one of its users, when
    /// the run may start on it (`startsOnRecordedBearer`, no SIM slot to switch, the privilege to
    /// bring it up otherwise) and the record and the kernel agree; nil: the modem is asked first.
    /// A modem whose lock another process holds is asked first too (it is changing the bearer).
    private func recordedBearer(
        of modem: DiscoveredModem, logger: Logger
    ) async throws(CellpathError)
        -> RecordedBearer?
    {
        guard options.startsOnRecordedBearer, options.simSlot == nil, Capability.netAdmin.isEffective,
            let lock = try? await ModemLock.acquire(modem, in: records, purpose: "joining the bearer", wait: .zero)
        else { return nil }
        defer { lock.release() }
        guard var record = try records.load(for: modem), RecordedBearer(record, settings: options.settings) != nil
        else { return nil }
        BearerTeardown.reportEnded(record.dropEndedUsers(), modem: modem, logger: logger)
        record.adopt(.whileRunning(keepAfterwards: options.keepBearer))
        try records.save(record)
        return RecordedBearer(record, settings: options.settings)
    }

    /// The modem asked, beside the run, whether `recorded` is up: the backend opened for the run
    /// (its indications followed, the radio read on it), the bearer's state and the serving
    /// network read together. The network it serves on, and no loss when the bearer is up; else
    /// the error that fails the run, with the dead bearer's addressing removed so that the chain
    /// fails at once and the next run asks the modem first.
    private func confirm(
        _ recorded: RecordedBearer, of modem: DiscoveredModem, logger: Logger
    ) async -> Confirmation {
        do throws(CellpathError) {
            let backend = try await open(modem, logger: logger)
            do {
                _ = try await follow(backend, logger: logger)
                async let registration = backend.registration()
                let bearer = try await backend.bearer()
                if let problem = recorded.disagreement(with: bearer) {
                    logger.warning("modem \(modem.index)'s bearer is not up as its record says: \(problem)")
                    removeAddressing(recorded.applied, logger: logger)
                    return Confirmation(lost: BearerBringUp.dropped(modem.index, problem))
                }
                let serving = (try? await registration)?.servingOperator?.id
                if let serving, serving != recorded.path.operatorID {
                    logger.info(
                        "modem \(modem.index) now serves on \(serving), not \(recorded.path.operatorID ?? "the recorded network")"
                    )
                }
                logger.info("modem \(modem.index) confirms its bearer is up")
                return Confirmation(servingNetwork: serving)
            } catch {
                throw BearerBringUp.cellpathError(error, step: "confirming the bearer")
            }
        } catch {
            return Confirmation(lost: error)
        }
    }

    /// Throws when the modem says the bearer taken from cellpath's record is not up; returns once
    /// it confirms it, or at once when the modem was asked before the run.
    public func confirmPath() async throws(CellpathError) {
        if let error = await confirmation?.value.lost { throw error }
    }

    /// The network the modem serves on, as it told beside a run on the recorded bearer; nil when
    /// the modem was asked before the run (the path's own is its answer) or did not tell.
    public func servingNetworkNow() async -> String? {
        await confirmation?.value.servingNetwork
    }

    /// Makes SIM slot `number` active on the modem, with no bearer brought up (`--sim-slot all`
    /// switches back to the slot the modem was on); in a task of its own, so that it runs to its
    /// end when the caller's was cancelled (Ctrl-C).
    public func switchSIMSlot(to number: Int) async throws(CellpathError) {
        let result = await Task { () async -> Result<Void, CellpathError> in
            do throws(CellpathError) {
                let modem = try await self.modemChosen()
                let logger = self.logger.scoped("modem\(modem.index)")
                let backend: any ModemBackend
                do {
                    backend = try await self.options.opener(modem.ports[0], self.options.access, logger)
                } catch {
                    throw BearerBringUp.cellpathError(error, step: "opening the modem")
                }
                let bringUp = BearerBringUp(
                    modem: modem, records: self.records, logger: logger, progress: self.progress)
                do throws(CellpathError) {
                    try await bringUp.switchSIMSlot(
                        to: number, on: backend, lockWait: self.options.lockWait,
                        deadline: .now + self.options.access.timeout)
                } catch {
                    await backend.close()
                    throw error
                }
                await backend.close()
                return .success(())
            } catch {
                return .failure(error)
            }
        }.value
        try result.get()
    }

    /// The modem `chooseModem` picks, its errors as cellpath's.
    private func modemChosen() async throws(CellpathError) -> DiscoveredModem {
        do {
            return try await chooseModem()
        } catch let error as CellpathError {
            throw error
        } catch {
            throw BearerBringUp.cellpathError(error, step: "choosing the modem")
        }
    }

    /// The network dropped the bearer while the path was in use: the addressing this run applied
    /// goes at once, so that the HTTP engine, which follows the interface's address, fails the
    /// hop in progress now (interfaceDown) instead of at its timeout. A reused bearer's addressing
    /// is another program's and stays.
    private func bearerDropped(reason: String?, logger: Logger) {
        // Taking the bearer down ourselves brings the same indication: that is no drop. Nor is a
        // bring-up still under way (its own undo after a refusal included): it reports its end.
        guard !releasing, recorded != nil || outcome != nil else { return }
        logger.warning("the network dropped the bearer (\(reason ?? "no reason given")): the path is down")
        if let recorded {
            removeAddressing(recorded.applied, logger: logger)
        } else if let outcome, !outcome.reused, let applied = outcome.record.addressing {
            removeAddressing(applied, logger: logger)
        }
    }

    /// Removes the addressing of a bearer that is gone.
    private func removeAddressing(_ applied: AppliedAddressing, logger: Logger) {
        for problem in InterfaceConfigurator().undo(applied) { logger.warning("\(problem)") }
        logger.debug("removed the dropped bearer's addressing from \(applied.addressing.interface)")
    }

    /// Without CAP_NET_ADMIN: the bearer that is up with its address on the interface (a QMAP
    /// bearer's mux device), as it is.
    private func existingPath(_ modem: DiscoveredModem, _ backend: any ModemBackend) async throws -> CellularPath {
        await backend.expect(options.settings.ipType)
        let bearer = try await backend.bearer()
        let wanted = options.settings.ipType
        let record = try? records.load(for: modem)
        let interface = BearerInterface.carrying(bearer, of: modem, record: record) ?? modem.interfaces.first
        func held(_ address: String?) -> String? {
            guard let address, let interface, InterfaceState.holds(address, on: interface) else { return nil }
            return address
        }
        let ipv4 = wanted.includesIPv4 ? held(bearer.ipv4Address) : nil,
            ipv6 = wanted.includesIPv6 ? held(bearer.ipv6Address) : nil
        guard bearer.state == .connected, let interface, ipv4 != nil || ipv6 != nil else {
            throw CellpathError(
                .permission,
                "couldn't bring modem \(modem.index)'s bearer up: configuring its interface needs CAP_NET_ADMIN",
                hint: "bring it up first (sudo cellpath bearer up), or run this with sudo; or "
                    + Capability.howToGrant([.netAdmin]))
        }
        let registration = try await backend.registration()
        logger.info("using modem \(modem.index)'s bearer as it is (no CAP_NET_ADMIN to change anything)")
        let dns = bearer.dnsServers.filter { $0.contains(":") ? ipv6 != nil : ipv4 != nil }
        return CellularPath(
            interfaceName: interface, ipv4Address: ipv4, ipv6Address: ipv6, dnsServers: dns, mtu: bearer.mtu,
            operatorID: registration.servingOperator?.id, modemBackend: backend.backendName.rawValue,
            ipv6PrefixLength: ipv6 == nil ? nil : bearer.ipv6PrefixLength,
            ipv6Gateway: ipv6 == nil ? nil : bearer.ipv6Gateway)
    }

    /// The radio now, read on the path's session (its time limit renewed: a field run's path
    /// lasts); nil before the path is up or when the modem could not be read.
    public func radioContext() async -> RadioContext? {
        _ = await confirmation?.value  // a run on the recorded bearer opens the modem there
        guard let backend else { return nil }
        await backend.renewTimeLimit()
        let start = ContinuousClock.now
        do {
            let radio = try await backend.radioContext()
            logger.debug("read the radio context in \(ContinuousClock.now - start)")
            return radio
        } catch {
            logger.warning("couldn't read the radio context: \(error.message)")
            return nil
        }
    }

    /// A GNSS fix from the path's modem, read on its session (a modem without one: the check
    /// goes on without a position, which its command warns about).
    public func gnssFix(within bound: Duration) async -> GNSSReading {
        guard let backend else { return .noFix("the cellular path is not up") }
        await backend.renewTimeLimit()
        let start = ContinuousClock.now
        let reading: GNSSReading
        do {
            reading = try await backend.gnssFix(within: bound)
        } catch {
            reading = .noFix(error.message)
        }
        logger.debug("read the GNSS receiver in \(ContinuousClock.now - start)")
        return reading
    }

    public func release() async {
        // Its own task: the caller's may be cancelled, and what this run brought up must go anyway.
        await Task { await self.takeDown() }.value
    }

    /// Releases this run's use of the bearer. A modem whose control port is gone reset or
    /// re-enumerated, its bearer with it: only what cellpath set on the interface is undone.
    private func takeDown() async {
        _ = await confirmation?.value
        releasing = true
        defer { (outcome, recorded, confirmation) = (nil, nil, nil) }
        // A run on the recorded bearer whose modem could not be opened leaves as the modem gone.
        if outcome != nil || recorded != nil, let chosen = modem {
            // The modem as it is now: the bearer may have added a data link (a QMAP mux device)
            // that the record names, and a reset may have renamed its ports.
            let current = await settled(chosen)
            let modem = current?.devicePath == chosen.devicePath ? current ?? chosen : chosen
            let logger = logger.scoped("modem\(modem.index)")
            let gone = !FileSystem.exists(modem.ports[0].devicePath)
            if gone {
                logger.warning(
                    "modem \(modem.index)'s control port is gone (the modem reset or re-enumerated): its bearer went with it"
                )
            } else {
                await backend?.renewTimeLimit()  // the fetch may have taken longer than bringing the bearer up may
            }
            do {
                let lock = try await ModemLock.acquire(
                    modem, in: records, purpose: "releasing the bearer",
                    wait: options.lockWait
                ) { holder in
                    logger.warning("waiting for \(holder) to finish with modem \(modem.index)'s bearer")
                }
                defer { lock.release() }
                let result = try await BearerTeardown(modem: modem, records: records, logger: logger).release(
                    on: gone ? nil : backend)
                if result == .leftForOthers && options.keepBearer {
                    logger.info(
                        "keeping modem \(modem.index)'s bearer up (--keep-bearer): cellpath bearer down takes it down")
                }
            } catch {
                logger.warning("couldn't release modem \(modem.index)'s bearer: \(error.message)")
            }
        }
        await close()
    }

    /// The modem as discovery finds it now. A modem that is re-enumerating shows its control port
    /// before its network interface (the kernel registers them in turn): it is read again, for
    /// at most 2 s, until the interface is back, or its bearer record would be refused as naming
    /// an interface that is not the modem's.
    private func settled(_ chosen: DiscoveredModem) async -> DiscoveredModem? {
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            let current = try? await chooseModem()
            guard let current, current.devicePath == chosen.devicePath, current.interfaces.isEmpty,
                !chosen.interfaces.isEmpty, ContinuousClock.now < deadline
            else { return current }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    private func close() async {
        await backend?.close()
        backend = nil
    }
}
