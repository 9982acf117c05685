import CellpathCore
import SimulatorScenario

/// Whether a simulated modem's SIM can be used.
enum SIMStatus: Equatable { case absent, pinLocked, ready }

/// Where a simulated modem stands with its network.
enum RegistrationStatus: Equatable { case radioOff, deregistered, searching, denied, home, roaming }

/// Why a bearer connect was refused; each protocol maps it onto its own status codes.
enum ConnectRefusal: Error, Equatable {
    case noSIM, pinRequired, radioOff, notRegistered
    /// Rejected by the network with this 3GPP cause (24.008 §10.5.6.6).
    case network(cause: Int)
    /// The world could not open the data plane.
    case networkRefused
}

/// A connected bearer.
struct ActiveBearer {
    var assignment: BearerAssignment
    var apn: String
    /// Monotonic seconds when the bearer came up.
    var since: Double
}

/// The protocol-neutral state of one simulated modem: radio, SIM PIN, registration and bearer.
/// Confined to the modem's server thread.
final class ModemState {
    let index: Int
    /// The scenario's modem; its SIM and reported IP change with hot-swaps and control requests.
    private(set) var modem: SimulatedModem
    let bearerNetwork: any BearerNetwork
    var radioOn: Bool
    var pinVerified = false
    var pinAttemptsLeft: Int
    /// The registration fault in force.
    var registrationFault: RegistrationFault
    /// The physical SIM slot in use: 1, or 2 with the scenario's `secondSlot`.
    private(set) var activeSlot: Int
    private(set) var bearer: ActiveBearer?
    /// The host has unlocked the profile's FCC lock since the modem appeared (it lasts until a
    /// reset or unplug, which start from a fresh state).
    var fccUnlocked = false

    init(index: Int, modem: SimulatedModem, bearerNetwork: any BearerNetwork) {
        self.index = index
        self.modem = modem
        self.bearerNetwork = bearerNetwork
        radioOn = !modem.faults.radioOff && !modem.profile.fccLocked
        activeSlot = modem.secondSlot == nil ? 1 : modem.activeSlot
        registrationFault = modem.faults.registration
        pinAttemptsLeft = (activeSlot == 2 ? modem.secondSlot?.sim : modem.sim)?.pinAttemptsLeft ?? 0
    }

    /// The card in the active slot (nil: empty slot, or an eSIM without an enabled profile).
    var sim: SimulatedSIM? { card(inSlot: activeSlot) }

    /// The card in physical slot `slot` (1 or 2), if any.
    func card(inSlot slot: Int) -> SimulatedSIM? {
        slot == 1 ? modem.sim : slot == 2 ? modem.secondSlot?.sim : nil
    }

    /// The number of physical SIM slots.
    var slotCount: Int { modem.secondSlot == nil ? 1 : 2 }

    /// Makes physical slot `slot` the active one, as a slot switch does: the bearer goes down,
    /// the new card starts unverified with its own PIN attempts. False for a slot that does not exist.
    func switchSlot(to slot: Int) -> Bool {
        guard (1 ... slotCount).contains(slot) else { return false }
        guard slot != activeSlot else { return true }
        disconnect()
        activeSlot = slot
        pinVerified = false
        pinAttemptsLeft = sim?.pinAttemptsLeft ?? 0
        return true
    }

    /// The active slot holds an eSIM (the second slot of an eSIM modem).
    var activeSlotIsESIM: Bool { activeSlot == 2 && modem.secondSlot?.esim == true }

    /// The active slot is an eSIM with no enabled profile.
    var esimWithoutProfile: Bool { activeSlotIsESIM && sim == nil }

    /// Radio-on is refused: the profile is FCC-locked and the host has not unlocked it.
    var fccLocked: Bool { modem.profile.fccLocked && !fccUnlocked }

    /// The network the active slot's SIM registers on: the second slot's own, else the modem's
    /// as it is on its serving cell (that cell's operator, if it has one).
    var network: SimulatedNetwork { modem.network(slot: activeSlot, cell: servingCellIndex) }

    var simStatus: SIMStatus {
        guard let sim else { return .absent }
        return sim.pinLocked && !pinVerified ? .pinLocked : .ready
    }

    /// PIN1 is enabled on the card (it asks for the PIN at power-up).
    var pinEnabled: Bool { sim?.pinLocked ?? false }

    var registration: RegistrationStatus {
        guard radioOn else { return .radioOff }
        guard simStatus == .ready else { return .deregistered }
        switch registrationFault {
        case .searching: return .searching
        case .denied: return .denied
        case .deregistered: return .deregistered
        case .registered: return network.roaming ? .roaming : .home
        }
    }

    var isRegistered: Bool { registration == .home || registration == .roaming }

    /// The SIM's home PLMN (from the IMSI), as MCC and MNC digits.
    var homePLMN: (mcc: String, mnc: String) {
        let imsi = Array(sim?.imsi ?? "")
        let mncLength = network.mnc.count == 3 ? 3 : 2
        guard imsi.count >= 3 + mncLength else { return (network.mcc, network.mnc) }
        return (String(imsi[0 ..< 3]), String(imsi[3 ..< (3 + mncLength)]))
    }

    /// The home operator's name: the serving network's when at home, else the PLMN digits.
    var homeOperatorName: String {
        let home = homePLMN
        return home.mcc == network.mcc && home.mnc == network.mnc ? network.operatorName : home.mcc + home.mnc
    }

    /// RSSI in dBm (clamped to -150…0) while registered, nil without service.
    var rssiDbm: Int? { isRegistered ? servingCell.rssiDbm : nil }

    /// The index in `network.cells` of the cell the modem camps on; a handover changes it (a
    /// reset camps on the first again).
    var servingCellIndex = 0
    var servingCell: SimulatedCell { modem.network.cells[min(servingCellIndex, modem.network.cells.count - 1)] }

    /// Tries a PIN1 entry; returns whether it matched. Wrong entries use up attempts.
    func verifyPIN(_ pin: String) -> Bool {
        guard let sim, pinAttemptsLeft > 0 else { return false }
        if pin == sim.pin {
            pinVerified = true
            pinAttemptsLeft = sim.pinAttemptsLeft
            return true
        }
        pinAttemptsLeft -= 1
        return false
    }

    /// What the network grants a request for `requested`: the families also in the scenario's
    /// `ipType`, or the refusal with 3GPP cause 50 (PDP type IPv4 only allowed) or 51 (IPv6 only).
    func grant(_ requested: BearerIPType) -> Result<BearerIPType, ConnectRefusal> {
        guard let granted = requested.granted(by: modem.ipType) else {
            return .failure(.network(cause: modem.ipType == .ipv4 ? 50 : 51))
        }
        return .success(granted)
    }

    /// Brings the bearer up on `apn` with the families of `requested` that the network grants
    /// (adding them to a bearer that is up already), or says why not. Idempotent.
    func connect(apn: String, requested: BearerIPType, now: Double) -> Result<ActiveBearer, ConnectRefusal> {
        if bearer == nil {
            switch simStatus {
            case .absent: return .failure(.noSIM)
            case .pinLocked: return .failure(.pinRequired)
            case .ready: break
            }
            if !radioOn { return .failure(.radioOff) }
            if !isRegistered { return .failure(.notRegistered) }
            if let code = modem.faults.connectRejectCode { return .failure(.network(cause: code)) }
            // No APN: the network picks the subscription's default (3GPP TS 23.401), the scenario's.
            if !modem.apn.isEmpty && !apn.isEmpty && apn.lowercased() != modem.apn.lowercased() {
                return .failure(.network(cause: 27))  // missing or unknown APN
            }
        }
        let granted: BearerIPType
        switch grant(requested) {
        case .success(let value): granted = value
        case .failure(let refusal): return .failure(refusal)
        }
        let current = bearer?.assignment.ipType
        let wanted =
            BearerIPType(
                carryingIPv4: granted.carriesIPv4 || current?.carriesIPv4 == true,
                ipv6: granted.carriesIPv6 || current?.carriesIPv6 == true) ?? granted
        if let bearer, wanted == current { return .success(bearer) }
        guard let assignment = try? bearerNetwork.connect(modemIndex: index, ipType: wanted) else {
            return .failure(.networkRefused)
        }
        let active = ActiveBearer(
            assignment: firmwareReport(of: assignment),
            apn: bearer?.apn ?? (apn.isEmpty ? modem.apn : apn), since: bearer?.since ?? now)
        bearer = active
        return .success(active)
    }

    /// The assignment as this modem's firmware reports it: the scenario's `reportedIP`, and for a
    /// profile with `ipv6LinkLocalOnly` a link-local IPv6 address.
    private func firmwareReport(of assignment: BearerAssignment) -> BearerAssignment {
        let reported = assignment.reported(as: modem.reportedIP)
        return modem.profile.ipv6LinkLocalOnly ? reported.linkLocalIPv6() : reported
    }

    /// Takes the families of `families` off the bearer (a QMI session of one family ends),
    /// taking it down when none is left; returns whether the bearer carried any of them.
    @discardableResult
    func release(_ families: BearerIPType) -> Bool {
        guard let current = bearer?.assignment.ipType,
            current.carriesIPv4 && families.carriesIPv4 || current.carriesIPv6 && families.carriesIPv6
        else {
            return false
        }
        guard
            let remaining = BearerIPType(
                carryingIPv4: current.carriesIPv4 && !families.carriesIPv4,
                ipv6: current.carriesIPv6 && !families.carriesIPv6),
            let assignment = try? bearerNetwork.connect(modemIndex: index, ipType: remaining)
        else {
            return disconnect()
        }
        bearer?.assignment = firmwareReport(of: assignment)
        return true
    }

    /// Takes the bearer down (closing its data plane); returns whether one was up.
    @discardableResult
    func disconnect() -> Bool {
        guard bearer != nil else { return false }
        bearer = nil
        bearerNetwork.disconnect(modemIndex: index)
        return true
    }

    /// The SIM is pulled out (nil) or `sim` is inserted: its PIN state starts over. The caller
    /// takes the bearer down first (a SIM change detaches from the network).
    func changeSIM(_ sim: SimulatedSIM?) {
        modem.sim = sim
        pinVerified = false
        pinAttemptsLeft = sim?.pinAttemptsLeft ?? 0
    }

    /// The DNS servers the modem reports from now on (`reportedIP.dnsServers`; nil = the carrier's),
    /// also for a bearer that is up.
    func reportDNS(_ servers: [String]?) {
        var report = modem.reportedIP ?? ReportedIPConfiguration()
        report.dnsServers = servers
        modem.reportedIP = report
        guard let type = bearer?.assignment.ipType else { return }
        let carrier = BearerAssignment.carrier(modemIndex: index, ipType: type).reported(as: report)
        bearer?.assignment.ipv4?.dnsServers = carrier.ipv4?.dnsServers ?? []
        bearer?.assignment.ipv6?.dnsServers = carrier.ipv6?.dnsServers ?? []
    }

    /// When a connected bearer is due to be dropped by the network fault, if any.
    var bearerDropDeadline: Double? {
        guard let bearer, let after = modem.faults.dropBearerAfterSeconds else { return nil }
        return bearer.since + Double(after)
    }
}

/// What `sim status` shows of a modem's control plane: radio, registration, the SIM's PIN
/// and roaming, as its clients see them right now.
public struct ModemControlStatus: Sendable, Equatable, Codable {
    public enum Radio: String, Sendable, Codable { case on, off }
    /// `deregistered` also while the radio is off or the SIM is not ready.
    public enum Registration: String, Sendable, Codable { case home, roaming, searching, denied, deregistered }
    /// PIN1: not enabled, waiting for the PIN, entered, or blocked (no attempts left).
    public enum PIN: String, Sendable, Codable { case disabled, required, verified, blocked }

    public var radio: Radio
    public var registration: Registration
    /// nil without a SIM.
    public var pin: PIN?
    public var pinAttemptsLeft: Int?
    /// Registered on a visited network.
    public var roaming: Bool
    /// The SIM slot in use (1, or 2 on a dual-SIM modem): the carrier sees that slot's SIM.
    public var activeSlot: Int

    public init(
        radio: Radio, registration: Registration, pin: PIN?, pinAttemptsLeft: Int?, roaming: Bool, activeSlot: Int = 1
    ) {
        self.radio = radio
        self.registration = registration
        self.pin = pin
        self.pinAttemptsLeft = pinAttemptsLeft
        self.roaming = roaming
        self.activeSlot = activeSlot
    }

    /// The state `modem` starts in (before any client talks to it).
    public init(initial modem: SimulatedModem) {
        self = ModemState(index: 0, modem: modem, bearerNetwork: StaticBearerNetwork(failing: true)).controlStatus
    }
}

extension ModemState {
    /// The state as `sim status` shows it.
    var controlStatus: ModemControlStatus {
        let registration: ModemControlStatus.Registration =
            switch self.registration {
            case .radioOff, .deregistered: .deregistered
            case .searching: .searching
            case .denied: .denied
            case .home: .home
            case .roaming: .roaming
            }
        let pin: ModemControlStatus.PIN? =
            switch simStatus {
            case .absent: nil
            case .ready: pinEnabled ? .verified : .disabled
            case .pinLocked: pinAttemptsLeft > 0 ? .required : .blocked
            }
        return ModemControlStatus(
            radio: radioOn ? .on : .off, registration: registration, pin: pin,
            pinAttemptsLeft: sim == nil ? nil : pinAttemptsLeft, roaming: registration == .roaming,
            activeSlot: activeSlot)
    }
}
