import CellpathCore
import SimulatedModems
import SimulatorScenario
import Synchronization
import SystemSupport

/// The SIM in each modem of a running world, as hot-swaps leave the first slot and slot switches
/// choose the active one. Thread-safe.
final class SIMSlots: Sendable {
    private let slots: Mutex<[SimulatedSIM?]>
    /// The card in each modem's second slot, as the scenario puts it there.
    private let secondSlots: [SimulatedSIM?]
    /// Tells modem `n`'s active slot: the scenario's until `follow` names the running modems'.
    private let activeSlot: Mutex<@Sendable (Int) -> Int>

    init(_ modems: [SimulatedModem]) {
        slots = Mutex(modems.map(\.sim))
        secondSlots = modems.map { $0.secondSlot?.sim }
        let initial = modems.map { $0.secondSlot == nil ? 1 : $0.activeSlot }
        activeSlot = Mutex { initial.indices.contains($0) ? initial[$0] : 1 }
    }

    /// From now on, the active slots are what `source` tells (nil: the scenario's).
    func follow(_ source: @escaping @Sendable (Int) -> Int?) {
        activeSlot.withLock { current in
            let initial = current
            current = { source($0) ?? initial($0) }
        }
    }

    /// The SIM in modem `n`'s active slot now (nil: none inserted, an eSIM without profile, or
    /// no such modem).
    func sim(_ n: Int) -> SimulatedSIM? {
        if active(n) == 2 { return secondSlots.indices.contains(n) ? secondSlots[n] : nil }
        return slots.withLock { $0.indices.contains(n) ? $0[n] : nil }
    }

    /// Modem `n`'s active slot (1 or 2).
    func active(_ n: Int) -> Int { activeSlot.withLock { $0 }(n) }

    /// The SIM in each modem's active slot.
    var all: [SimulatedSIM?] { (0 ..< secondSlots.count).map(sim) }

    /// Puts `sim` in modem `n`'s first slot.
    func set(_ n: Int, _ sim: SimulatedSIM?) { slots.withLock { $0[n] = sim } }
}

/// The cell each modem of a running world camps on (its index in the modem's `network.cells`), as
/// handovers and resets leave it: the fake API tells a device's operator by it. Thread-safe.
final class ServingCells: Sendable {
    private let cells: Mutex<[Int]>

    init(modems: Int) { cells = Mutex(Array(repeating: 0, count: modems)) }

    func cell(_ n: Int) -> Int { cells.withLock { $0.indices.contains(n) ? $0[n] : 0 } }

    func set(_ n: Int, _ cell: Int) { cells.withLock { if $0.indices.contains(n) { $0[n] = cell } } }
}

/// The control requests that make the world's modems undergo lifecycle events
/// (docs/simulator.md "Lifecycle events"). Main thread only.
extension RunningWorld {
    func handleEvent(_ request: ControlRequest, dataPlane: DataPlane) throws {
        switch request.command {
        case .reset: try reset(request, dataPlane: dataPlane)
        case .swapSIM:
            guard let identity = request.sim else {
                throw CellpathError(.usage, "swapSIM needs the new SIM's identities")
            }
            let sim = try Self.validated(identity)
            let (n, device) = try modemDevice(request)
            if let other = sims.all.enumerated().first(where: { $0.offset != n && $0.element?.msisdn == sim.msisdn }) {
                throw CellpathError(.usage, "MSISDN \(sim.msisdn) is modem \(other.offset)'s SIM's")
            }
            device.changeSIM(nil)
            device.changeSIM(sim)
            sims.set(n, sim)
            try? dataPlane.disconnect(n)
            log("modem \(n): SIM swapped, now ICCID \(sim.iccid)")
        case .removeSIM:
            let (n, device) = try modemDevice(request)
            device.changeSIM(nil)
            sims.set(n, nil)
            try? dataPlane.disconnect(n)
            log("modem \(n): SIM removed")
        case .reportDNS:
            let servers = request.dnsServers
            if let bad = servers?.first(where: { IPAddress.ipv4Bytes($0) == nil && IPAddress.ipv6Bytes($0) == nil }) {
                throw CellpathError(.usage, "reportDNS: \(bad) is not a numeric IPv4 or IPv6 address")
            }
            let (n, device) = try modemDevice(request)
            device.reportDNS(servers)
            log("modem \(n): reports DNS \(servers?.joined(separator: " ") ?? "of the carrier")")
        case .handover:
            let (n, device) = try modemDevice(request)
            guard let cell = request.cell, device.handover(to: cell) else {
                throw CellpathError(
                    .usage, "handover: modem \(n)'s network has cells 0 to \(device.modem.network.cells.count - 1)")
            }
            servingCells.set(n, cell)
            log("modem \(n): handed over to cell \(cell)")
        case .suspend: try suspend(dataPlane: dataPlane)
        case .resume: try resume()
        case .status, .connect, .disconnect, .stop, .unlockFCC: break
        }
    }

    /// Fires the scenario's events that are due, as their control requests would; a failure is logged.
    func fireDueEvents() {
        guard let dataPlane else { return }
        while let event = scheduledEvents.first, upSince + Double(event.atSeconds) <= MonotonicClock.now {
            scheduledEvents.removeFirst()
            let identity = event.sim.map { SIMIdentity(iccid: $0.iccid, imsi: $0.imsi, msisdn: $0.msisdn) }
            let command: ControlRequest.Command =
                switch event.event {
                case .reset: .reset
                case .swapSIM: .swapSIM
                case .removeSIM: .removeSIM
                case .reportDNS: .reportDNS
                case .handover: .handover
                case .suspend: .suspend
                case .resume: .resume
                }
            let request = ControlRequest(
                command: command, modem: event.modem, renumber: event.renumber,
                slowMs: event.slowMs, slowSeconds: event.slowSeconds, sim: identity,
                dnsServers: event.dnsServers, cell: event.cell)
            log("scenario event at \(event.atSeconds) s: \(event.event.rawValue)")
            do {
                try handleEvent(request, dataPlane: dataPlane)
            } catch {
                log("scenario event \(event.event.rawValue) failed: \(error)")
            }
        }
    }

    /// How long the control loop may wait: until the next scenario event, at most 1 s.
    func nextEventTimeoutMs() -> Int32 {
        guard let next = scheduledEvents.first else { return 1000 }
        let wait = (upSince + Double(next.atSeconds) - MonotonicClock.now) * 1000
        return Int32(max(0, min(1000, wait.rounded(.up))))
    }

    /// The modem resets and re-enumerates: ports and net device vanish (the TUN device is
    /// deleted, taking its addresses and routes) and come back, under the next free names
    /// with `renumber`; the bearer is lost; the modem answers slowly for a while.
    private func reset(_ request: ControlRequest, dataPlane: DataPlane) throws {
        let (n, device) = try modemDevice(request)
        if let ms = request.slowMs, !(0 ... 60_000).contains(ms) {
            throw CellpathError(.usage, "slowMs must be 0 to 60000")
        }
        if let seconds = request.slowSeconds, !(1 ... 3600).contains(seconds) {
            throw CellpathError(.usage, "slowSeconds must be 1 to 3600")
        }
        let faults = scenario.modems[n].faults
        let slow =
            request.slowMs == nil && request.slowSeconds == nil
            ? nil
            : SimulatedModemDevice.SlowResponses(
                delayMs: request.slowMs ?? faults.slowAfterResetMs,
                seconds: request.slowSeconds ?? faults.slowAfterResetSeconds)
        let number = request.renumber == true ? modemSource?.nextFreeNumber() : nil
        let old = device.kernelNames
        try device.reset(as: number, slow: slow) { names in
            // A device without a net device (the L850) keeps the world's TUN device as it is.
            guard let interface = names.interface else { return }
            try dataPlane.recreateModemInterface(n, name: interface)
            try builder.prepareModemInterface(n, interface: interface)
        }
        let new = device.kernelNames
        if let sink = startedServices.lazy.compactMap({ $0 as? any KernelEventSink }).first,
            let terminal = device.terminalPath
        {
            try sink.reEnumerated(from: old, to: new, profile: scenario.modems[n].profile, terminal: terminal, run: run)
        }
        func describe(_ names: SimulatedModemDevice.KernelNames) -> String {
            "\(names.controlPort ?? "no control port")/\(names.interface ?? "no net device")"
        }
        servingCells.set(n, 0)
        log("modem \(n): reset, \(describe(old)) re-enumerated as \(describe(new))")
    }

    /// The machine suspends: with ModemManager, logind's PrepareForSleep(true) (ModemManager
    /// removes its modems); every modem but router-mode ones loses its bearer, its data path closes.
    private func suspend(dataPlane: DataPlane) throws {
        guard !suspended else { throw CellpathError(.usage, "the world is already suspended") }
        suspended = true
        sleepSignal?.prepareForSleep(true)
        // A router-mode modem is a router of its own: the host's sleep does not end its connection.
        for n in scenario.modems.indices where !RouterModem.isRouter(scenario.modems[n]) {
            modemSource?.device(modem: n)?.dropBearer()
            try? dataPlane.disconnect(n)
        }
        log("suspended")
    }

    /// The machine resumes: with ModemManager, PrepareForSleep(false) (it probes the modems again).
    private func resume() throws {
        guard suspended else { throw CellpathError(.usage, "the world is not suspended") }
        suspended = false
        sleepSignal?.prepareForSleep(false)
        log("resumed")
    }

    private var modemSource: (any ModemControlSource)? {
        startedServices.lazy.compactMap { $0 as? any ModemControlSource }.first
    }

    private var sleepSignal: (any SleepSignal)? {
        startedServices.lazy.compactMap { $0 as? any SleepSignal }.first
    }

    /// The request's modem and its running device; a usage error for a modem the world lacks.
    private func modemDevice(_ request: ControlRequest) throws -> (Int, SimulatedModemDevice) {
        let n = request.modem ?? 0
        if scenario.modems.indices.contains(n), RouterModem.isRouter(scenario.modems[n]) {
            throw CellpathError(
                .usage,
                "modem \(n) is a router-mode modem: it has no MBIM or QMI port to take events through")
        }
        guard scenario.modems.indices.contains(n), let device = modemSource?.device(modem: n) else {
            let count = scenario.modems.count
            let range = count == 1 ? "only modem 0" : "modems 0 to \(count - 1)"
            throw CellpathError(.usage, "no modem \(n): this world has \(range)")
        }
        return (n, device)
    }

    private func log(_ message: String) { DaemonLog.write("[\(topology.prefix)] \(message)") }

    /// The SIM of `identity`, checked as the scenario checks a SIM's identities.
    private static func validated(_ identity: SIMIdentity) throws -> SimulatedSIM {
        func digits(_ text: String, _ range: ClosedRange<Int>) -> Bool {
            range.contains(text.count) && text.allSatisfy { $0.isASCII && $0.isNumber }
        }
        guard digits(identity.iccid, 18 ... 20) else {
            throw CellpathError(.usage, "sim.iccid must be 18 to 20 digits")
        }
        guard digits(identity.imsi, 6 ... 15) else { throw CellpathError(.usage, "sim.imsi must be 6 to 15 digits") }
        guard identity.msisdn.hasPrefix("+"), digits(String(identity.msisdn.dropFirst()), 7 ... 15) else {
            throw CellpathError(.usage, "sim.msisdn must be E.164 with a leading '+'")
        }
        return SimulatedSIM(iccid: identity.iccid, imsi: identity.imsi, msisdn: identity.msisdn)
    }
}

/// A service that is told, as udev would tell it, that a modem re-enumerated.
protocol KernelEventSink {
    func reEnumerated(
        from old: SimulatedModemDevice.KernelNames, to new: SimulatedModemDevice.KernelNames,
        profile: DeviceProfile, terminal: String, run: RunDirectory) throws
}

/// A service that tells the world's programs that the machine sleeps or wakes (logind's
/// PrepareForSleep on the world's bus).
protocol SleepSignal {
    func prepareForSleep(_ sleeping: Bool)
}
