import CellpathCore
import Glibc
import IPConfiguration
import ModemDiscovery
import Modems
import SystemSupport

/// Takes a modem's bearer down as cellpath's record says: removes the addressing cellpath
/// applied (restoring rp_filter), disconnects the bearer if cellpath connected it (or with
/// `force`), and forgets the record. A bearer that running cellpath processes still use is not
/// taken down under them: `bearer down` hands it to the last of them, and a user that releases
/// it takes it down only when it is the last and nobody asked to keep it. Idempotent. The
/// caller holds the modem's lock (`ModemLock`).
public struct BearerTeardown: Sendable {
    public let modem: DiscoveredModem
    public let records: BearerRecords
    public let logger: Logger
    /// Where the modem's net devices' attributes are (`qmi/del_mux` of a QMAP bearer's mux).
    public let sysfsRoot: String

    public init(
        modem: DiscoveredModem, records: BearerRecords, logger: Logger,
        sysfsRoot: String = DeviceRoots(environment: ProcessEnvironment.current()).sysfs
    ) {
        self.modem = modem
        self.records = records
        self.logger = logger
        self.sysfsRoot = sysfsRoot
    }

    /// What happened to the bearer.
    public enum Result: Sendable, Equatable {
        case disconnected
        /// Connected by another program, and left so (no `force`).
        case leftConnected
        case alreadyDown
        /// Still used by these running cellpath processes: the last of them takes it down.
        case inUse([Int32])
        /// Left up for its other users, or because it is kept (`bearer up`, `--keep-bearer`).
        case leftForOthers
    }

    /// `bearer down`: takes the bearer down through `backend` (nil: the modem cannot be reached,
    /// so only the interface is cleaned up), unless running cellpath processes use it (then it
    /// is no longer kept, and the last of them takes it down); `force` takes it down anyway,
    /// disconnects another program's bearer, and without a record removes what has cellpath's
    /// shape on the modem's interface. Returns what happened, and whether cellpath's
    /// configuration of the interface was removed.
    public func run(
        force: Bool, on backend: (any ModemBackend)?
    ) async throws(CellpathError)
        -> (bearer: Result, removedConfiguration: Bool)
    {
        guard var record = try records.load(for: modem) else {
            var removed = false
            if force, let interface = modem.interfaces.first {
                let leftovers = InterfaceConfigurator().removeLeftovers(on: interface)
                for problem in leftovers.problems { logger.warning("\(problem)") }
                removed = !leftovers.removed.isEmpty
                if removed { logger.info("removed without a record: \(leftovers.removed.joined(separator: ", "))") }
            }
            let result = try await disconnect(nil, force: force, on: backend)
            if !force && records.hasRefused(modem) {
                logger.warning(
                    "modem \(modem.index)'s bearer record was refused earlier: --force removes what cellpath left on \(modem.interfaces.first ?? "its interface") and disconnects the bearer"
                )
            }
            return (result, removed)
        }
        Self.reportEnded(record.dropEndedUsers(), modem: modem, logger: logger)
        if !record.users.isEmpty && !force {
            record.kept = false
            try records.save(record)
            let pids = record.users.map(\.pid)
            logger.info(
                "in use by cellpath process\(pids.count == 1 ? "" : "es") \(pids.map(String.init).joined(separator: ", ")): the last one takes it down"
            )
            return (.inUse(pids), false)
        }
        return try await takeDown(record, force: force, on: backend)
    }

    /// A user of the bearer (this process) is done with it: it is taken down when this was the
    /// last user, cellpath connected it, and nobody asked to keep it; else it is left up.
    /// `backend` nil: the modem is gone (it reset), and its bearer with it; only the interface's
    /// configuration is undone.
    public func release(on backend: (any ModemBackend)?) async throws(CellpathError) -> Result {
        guard var record = try records.load(for: modem) else { return .alreadyDown }
        let me = ProcessIdentity.current
        record.users.removeAll { $0 == me }
        Self.reportEnded(record.dropEndedUsers(), modem: modem, logger: logger)
        guard record.users.isEmpty, !record.kept, record.connectedByCellpath else {
            try records.save(record)
            if !record.users.isEmpty {
                logger.info(
                    "left up for cellpath process\(record.users.count == 1 ? "" : "es") \(record.users.map { String($0.pid) }.joined(separator: ", ")), which use it too"
                )
            }
            return record.connectedByCellpath ? .leftForOthers : .leftConnected
        }
        return try await takeDown(record, force: false, on: backend).bearer
    }

    /// Removes the record's addressing, then disconnects (cellpath's own bearer, or any with
    /// `force`), then forgets the record.
    private func takeDown(
        _ record: BearerRecord, force: Bool, on backend: (any ModemBackend)?
    ) async throws(CellpathError)
        -> (bearer: Result, removedConfiguration: Bool)
    {
        var record = record
        // Newest first, as a bring-up's undo: the interface's configuration, then the bearer.
        var removed = false
        if let applied = record.addressing {
            for problem in InterfaceConfigurator().undo(applied) { logger.warning("\(problem)") }
            removed = true
            logger.info("configuration of \(applied.addressing.interface) removed")
            record.addressing = nil
            try records.save(record)  // kept until the bearer is down too
        }
        let result = try await disconnect(
            record.connectedByCellpath ? record.handle : nil, owned: record.connectedByCellpath,
            force: force, on: backend)
        if let mux = record.qmapMuxID, let master = modem.interfaces.first {
            let path = QMIDataPath(modemIndex: modem.index, sysfs: sysfsRoot, master: master, logger: logger)
            if let problem = path.removeMux(UInt8(clamping: mux)) {
                logger.warning("\(problem)")
            } else {
                logger.info("QMAP mux device \(record.interface) removed")
            }
        }
        records.remove(modem)
        return (result, removed)
    }

    /// Disconnects through `backend`: cellpath's own bearer (`owned`, with its handle), or a
    /// bearer that is connected when `force` says so.
    private func disconnect(
        _ handle: BearerHandle?, owned: Bool = false, force: Bool,
        on backend: (any ModemBackend)?
    ) async throws(CellpathError) -> Result {
        guard let backend else { return .alreadyDown }
        var result = Result.alreadyDown
        do {
            if owned {
                // cellpath's own: disconnecting tells whether it was still up (and gives back the QMI client ID).
                if try await backend.disconnect(handle) { result = .disconnected }
            } else if [.connected, .connecting].contains(try await backend.bearerState()) {
                if force {
                    try await backend.disconnect(nil)
                    result = .disconnected
                } else {
                    logger.info("the bearer was connected by another program: left connected")
                    result = .leftConnected
                }
            }
        } catch  where error.layer == .transport && error.kind == .unavailable {
            // The open session's port hung up or went away under the call: the modem reset or
            // re-enumerated, and its bearer went with it, as when its port is gone before.
            logger.warning(
                "modem \(modem.index) went away while its bearer was being disconnected (\(error.message)): its bearer went with it"
            )
            return .alreadyDown
        } catch {
            throw error.cellpathError
        }
        if result == .disconnected { logger.info("bearer disconnected") }
        return result
    }

    /// Says that cellpath processes ended without releasing the bearer (a second Ctrl-C, a kill).
    static func reportEnded(_ ended: [ProcessIdentity], modem: DiscoveredModem, logger: Logger) {
        guard !ended.isEmpty else { return }
        logger.warning(
            "cellpath process\(ended.count == 1 ? "" : "es") \(ended.map { String($0.pid) }.joined(separator: ", ")) ended without releasing modem \(modem.index)'s bearer: cleaning up after \(ended.count == 1 ? "it" : "them")"
        )
    }
}
