import CellpathCore
import Modems
import SystemSupport

/// `--sim-slot`: the slot switch before the bring-up's steps, under the modem's lock, and the
/// errors that name what the active slot holds.
extension BearerBringUp {
    /// How long the card in a newly active slot may take to be read, within the request's deadline.
    static let slotReadyWait = Duration.seconds(30)

    /// Makes SIM slot `number` (from 1) the active one, unless it is already, and waits until
    /// the modem has read its card. Refuses a slot the modem does not have, a modem that reports
    /// no slots, and a switch that would take down a bearer that is up (another command's, or
    /// kept): the slot stays active afterwards, as ModemManager's SetPrimarySimSlot leaves it.
    func selectSIMSlot(
        _ number: Int, deadline: ContinuousClock.Instant, _ backend: any ModemBackend
    ) async throws {
        let slots = try await backend.simSlots()
        guard !slots.isEmpty else {
            switch backend.backendName {
            case .mbim:
                throw CellpathError(
                    .usage, "modem \(modem.index) reports no second SIM slot: --sim-slot needs a dual-SIM modem",
                    hint: "leave --sim-slot out to use its SIM")
            case .modemManager:
                throw CellpathError(
                    .unavailable, "cellpath switches SIM slots over MBIM, not through ModemManager",
                    hint: "add --backend mbim, or switch with mmcli --set-primary-sim-slot=\(number)")
            case .qmi:
                throw CellpathError(
                    .unavailable, "cellpath switches SIM slots over MBIM, not over QMI",
                    hint: "switch with qmicli --uim-switch-slot, or mmcli --set-primary-sim-slot=\(number)")
            }
        }
        guard slots.contains(where: { $0.number == number }) else {
            throw CellpathError(
                .usage,
                "modem \(modem.index) has SIM slots 1 to \(slots.count): there is no slot \(number)",
                hint: "slots count from 1; cellpath modems --json lists them")
        }
        if slots.first(where: \.active)?.number == number {
            logger.info("SIM slot \(number) is active already")
            return
        }
        if try await backend.bearerState() == .connected {
            var record = try records.load(for: modem)
            _ = record?.dropEndedUsers()
            let users = record?.users.map { "pid \($0.pid)" } ?? []
            let holder =
                !users.isEmpty
                ? "running cellpath commands use it (\(users.joined(separator: ", ")))"
                : record?.kept == true
                    ? "cellpath bearer up keeps it" : "another program connected it"
            throw CellpathError(
                .temporary,
                "modem \(modem.index)'s bearer is up on SIM slot \(slots.first(where: \.active).map { String($0.number) } ?? "?"): \(holder), and switching to slot \(number) would take it down",
                hint: "wait until it is down, or take it down first: cellpath bearer down -m \(modem.index)")
        }
        progress("switching to SIM slot \(number)")
        try await backend.switchSIMSlot(to: number)
        logger.info("switched to SIM slot \(number)")
        let until = min(deadline, .now + Self.slotReadyWait)
        while try await backend.simState().state == .notReady {
            guard ContinuousClock.now < until else {
                throw CellpathError(
                    .temporary, "the SIM in modem \(modem.index)'s slot \(number) is not ready after the switch",
                    hint: "retry in a few seconds, or allow more time with --timeout")
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// Makes SIM slot `number` active, under the modem's lock, without bringing a bearer up: the
    /// slot a modem was on, made active again after `--sim-slot all` walked its SIMs.
    public func switchSIMSlot(
        to number: Int, on backend: any ModemBackend, lockWait: Duration, deadline: ContinuousClock.Instant
    ) async throws(CellpathError) {
        let lock = try await ModemLock.acquire(modem, in: records, purpose: "switching the SIM slot", wait: lockWait) {
            holder in logger.warning("waiting for \(holder) to finish with modem \(modem.index)")
        }
        defer { lock.release() }
        do {
            try await selectSIMSlot(number, deadline: deadline, backend)
        } catch {
            throw Self.cellpathError(error, step: "switching to SIM slot \(number)")
        }
    }

    /// The error for a SIM that is not there (`sim` as read): it names the active slot and what
    /// it holds, where the modem reports its slots.
    func missingSIM(_ sim: SIMStatus, _ backend: any ModemBackend) async -> CellpathError {
        var sim = sim
        if sim.slots.isEmpty { sim.slots = (try? await backend.simSlots()) ?? [] }
        let message =
            sim.state == .absent && sim.activeSlot == nil
            ? "modem \(modem.index) has no SIM" : "modem \(modem.index): \(sim.missingSIMDescription ?? "no SIM")"
        return CellpathError(.unavailable, message, hint: sim.missingSIMRemedy)
    }
}
