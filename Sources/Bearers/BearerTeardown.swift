import CellpathCore
import IPConfiguration
import ModemDiscovery
import Modems

/// Takes a modem's bearer down as cellpath's record says: removes the addressing cellpath
/// applied (restoring rp_filter), disconnects the bearer if cellpath connected it (or with
/// `force`), and forgets the record. Idempotent.
public struct BearerTeardown: Sendable {
    public let modem: DiscoveredModem
    public let records: BearerRecords
    public let logger: Logger

    public init(modem: DiscoveredModem, records: BearerRecords, logger: Logger) {
        self.modem = modem
        self.records = records
        self.logger = logger
    }

    /// What happened to the bearer.
    public enum Result: Sendable, Equatable {
        case disconnected
        /// Connected by another program, and left so (no `force`).
        case leftConnected
        case alreadyDown
    }

    /// Takes the bearer down through `backend` (nil: the modem cannot be reached, so only the
    /// interface is cleaned up). Returns what happened to the bearer, and whether cellpath's
    /// configuration of the interface was removed.
    public func run(force: Bool, on backend: (any ModemBackend)?) async throws(CellpathError)
        -> (bearer: Result, removedConfiguration: Bool) {
        let port = modem.ports[0].devicePath
        var record = records.load(port)
        // Newest first, as a bring-up's undo: the interface's configuration, then the bearer.
        var removed = false
        if let applied = record?.addressing {
            for problem in InterfaceConfigurator().undo(applied) { logger.warning("\(problem)") }
            removed = true
            logger.info("configuration of \(applied.addressing.interface) removed")
            record?.addressing = nil
            if let record { try? records.save(record) }  // kept until the bearer is down too
        }
        var result = Result.alreadyDown
        if let backend {
            do {
                if let record, record.connectedByCellpath {
                    // cellpath's own: disconnecting tells whether it was still up (and gives back the QMI client ID).
                    if try await backend.disconnect(record.handle) { result = .disconnected }
                } else if [.connected, .connecting].contains(try await backend.bearerState()) {
                    if force {
                        try await backend.disconnect(nil)
                        result = .disconnected
                    } else {
                        logger.info("the bearer was connected by another program: left connected")
                        result = .leftConnected
                    }
                }
            } catch {
                throw error.cellpathError
            }
            if result == .disconnected { logger.info("bearer disconnected") }
        }
        if record != nil { records.remove(port) }
        return (result, removed)
    }
}
