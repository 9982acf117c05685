import CellpathCore
import ModemDiscovery

extension BearerBringUp {
    /// The MBIM status an FCC-locked modem answers to radio-on.
    static let fccLockedStatus = "OperationNotAllowed"

    /// The FCC lock behind a refused radio-on, or nil when `error` is not one: the modem answered
    /// OperationNotAllowed, or refused it while its model (`vid:pid`) is on ModemManager's
    /// FCC-unlock list. Exit 69 (unavailable), with what the lock is and how to lift it (the
    /// vendor's script when the model has no entry of its own).
    func fccLock(refusing error: any Error) -> CellpathError? {
        guard let error = error as? ModemError, error.layer == .protocol else { return nil }
        let list = FCCUnlockList()
        guard error.status == Self.fccLockedStatus || list.entry(for: modem, orVendor: false) != nil else {
            return nil
        }
        let id = FCCUnlockList.hardwareID(of: modem)
        return CellpathError(
            .unavailable,
            "modem \(modem.index)\(id.map { " (\($0))" } ?? "") is FCC-locked: it refused to switch its radio on "
                + "(\(error.status ?? error.reason)); FCC-locked is \(FCCUnlockList.meaning)",
            hint: list.remedy(
                entry: list.entry(for: modem), hardwareID: id, simulated: modem.isSimulated))
    }
}
