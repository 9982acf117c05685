import CellpathCore

/// A simulated world: its modems (each with a SIM and a data path), the path delays, and the
/// faults of the fake API and the carrier. Loaded from JSON (docs/simulator.md); every field
/// has a default so that `{}` is the built-in default world.
public struct Scenario: Sendable, Equatable, Encodable {
    public var modems: [SimulatedModem]
    public var cellularPath: LinkConditions
    public var wifiPath: LinkConditions
    public var api: APIFaults
    public var carrier: CarrierFaults
    /// Faults of the providers' fake operators.
    public var providers = ProviderFaults()
    /// Whether the world runs the real ModemManager on its modems (`sim up --modemmanager`).
    public var modemManager: Bool
    /// Lifecycle events the world makes its modems undergo, each at its time.
    public var events: [ScenarioEvent] = []

    public init(
        modems: [SimulatedModem] = [SimulatedModem(index: 0)],
        cellularPath: LinkConditions = LinkConditions(delayMs: 40),
        wifiPath: LinkConditions = LinkConditions(delayMs: 5),
        api: APIFaults = APIFaults(), carrier: CarrierFaults = CarrierFaults(), modemManager: Bool = false
    ) {
        self.modems = modems
        self.cellularPath = cellularPath
        self.wifiPath = wifiPath
        self.api = api
        self.carrier = carrier
        self.modemManager = modemManager
    }

    /// The built-in default: one MBIM modem, one SIM on operator 001-01 "cellpath sim",
    /// 40 ms one-way on the cellular path, 5 ms on Wi-Fi.
    public static let builtIn = Scenario()

    /// Whether the carrier is a NAT64 carrier (a modem has `nat64`): DNS64 answers its IPv6
    /// bearers and the API has no IPv6 address of its own.
    public var nat64: Bool { modems.contains { $0.nat64 } }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case modems, cellularPath, wifiPath, api, carrier, providers, modemManager, events
    }
}

/// A lifecycle event the world makes a modem (or, for `suspend`/`resume`, the machine) undergo
/// `atSeconds` after it is up (`events[i]`; docs/simulator.md "Lifecycle events").
public struct ScenarioEvent: Sendable, Equatable, Encodable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case reset, swapSIM, removeSIM, reportDNS, handover, suspend, resume
    }

    public var atSeconds: Int
    public var event: Kind
    /// The modem's index (ignored by `suspend` and `resume`).
    public var modem: Int = 0
    /// `reset`: come back under the next free names.
    public var renumber: Bool = false
    /// `reset`: slow answers, instead of the modem's `faults.slowAfterReset…`.
    public var slowMs: Int? = nil
    public var slowSeconds: Int? = nil
    /// `swapSIM`: the SIM inserted.
    public var sim: SimulatedSIM? = nil
    /// `reportDNS`: the servers reported from now on; nil: the carrier's.
    public var dnsServers: [String]? = nil
    /// `handover`: the index of the cell in the modem's `network.cells`.
    public var cell: Int? = nil

    public init(atSeconds: Int, event: Kind, modem: Int = 0) {
        self.atSeconds = atSeconds
        self.event = event
        self.modem = modem
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case atSeconds, event, modem, renumber, slowMs, slowSeconds, sim, dnsServers, cell
    }
}

/// Which control protocol a simulated modem speaks on its pseudo-terminal.
public enum ModemProtocol: String, Sendable, Codable, CaseIterable { case mbim, qmi }

/// One simulated modem with its SIM, its serving network and its faults.
public struct SimulatedModem: Sendable, Equatable, Encodable {
    /// The real model's shape this modem takes (docs/simulator-modems.md, "Device zoo").
    public var device: DeviceProfile.Name = .simulated
    public var `protocol`: ModemProtocol
    public var imei: String
    public var manufacturer: String
    public var model: String
    public var firmware: String
    public var sim: SimulatedSIM?
    public var network: SimulatedNetwork
    public var apn: String
    /// The address families this modem's network grants a bearer (`ipv4` by default): a
    /// connect gets the families it asks for that are also in here, and is refused when none is.
    public var ipType: BearerIPType
    /// The network is IPv6-only behind NAT64/DNS64 (prefix 2001:db8:64:ff9b::/96); only with `ipType` `ipv6`.
    public var nat64: Bool
    public var faults: ModemFaults
    /// What the modem reports of its connected bearer's IP configuration instead of the
    /// carrier's assignment (hostile or broken firmware); nil reports the assignment.
    public var reportedIP: ReportedIPConfiguration?
    /// A second SIM slot (dual-SIM and eSIM modems); nil: one slot.
    public var secondSlot: SecondSIMSlot? = nil
    /// The slot in use when the modem appears: 1, or 2 with a `secondSlot`.
    public var activeSlot: Int = 1
    /// udev marks the modem `ID_MM_DEVICE_IGNORE=1`: the world's ModemManager leaves it alone
    /// and cellpath's `--backend auto` reaches it through its own client.
    public var modemManagerIgnore: Bool = false
    /// The GNSS fix the modem's receiver has (QMI LOC's position reports); nil: no fix.
    public var gnss: SimulatedGNSS? = nil

    /// The shape rebuilt from a device capture, when `device` is `captured` (`deviceShape`).
    public var capturedProfile: DeviceProfile? = nil

    /// Everything the kernel and firmware present for this modem's `device`.
    public var profile: DeviceProfile {
        switch device {
        case .simulated: .simulated(`protocol`)
        case .captured: capturedProfile ?? .simulated(`protocol`)
        default: .named(device)
        }
    }

    public init(
        protocol: ModemProtocol = .mbim, imei: String = SimulatedModem.defaultIMEI(index: 0),
        manufacturer: String = "cellpath", model: String = "Simulated LTE modem",
        firmware: String = "SIM.1.0", sim: SimulatedSIM? = SimulatedSIM(),
        network: SimulatedNetwork = SimulatedNetwork(), apn: String = "internet",
        ipType: BearerIPType = .ipv4, nat64: Bool = false, faults: ModemFaults = ModemFaults(),
        reportedIP: ReportedIPConfiguration? = nil
    ) {
        self.protocol = `protocol`
        self.imei = imei
        self.manufacturer = manufacturer
        self.model = model
        self.firmware = firmware
        self.sim = sim
        self.network = network
        self.apn = apn
        self.ipType = ipType
        self.nat64 = nat64
        self.faults = faults
        self.reportedIP = reportedIP
    }

    /// Modem number `index` of a world with every default: its IMEI and its SIM's identities
    /// are derived from the index, so that every modem of a world differs.
    public init(index: Int) {
        self.init(imei: Self.defaultIMEI(index: index), sim: SimulatedSIM(index: index))
    }

    /// The default IMEI of modem `index`: TAC 35123456, serial 789012 + index, Luhn check digit.
    public static func defaultIMEI(index: Int) -> String {
        Luhn.appendingCheckDigit(to: "35123456" + digits(789_012 + index, width: 6))
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case device, `protocol`, imei, manufacturer, model, firmware, sim, network, apn, ipType, nat64, faults,
            reportedIP,
            secondSlot, activeSlot, deviceShape, modemManagerIgnore, gnss
    }

    /// Writes every field; `sim` as an explicit null when there is none (absent means the default SIM);
    /// no `protocol` for a device without an MBIM or QMI port, as reading refuses one there.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        // A captured modem is written as its deviceShape.
        if capturedProfile == nil { try c.encode(device, forKey: .device) }
        // A device without an MBIM or QMI port (router mode) has no protocol to write back.
        if profile.controlProtocol != nil { try c.encode(`protocol`, forKey: .protocol) }
        try c.encode(imei, forKey: .imei)
        try c.encode(manufacturer, forKey: .manufacturer)
        try c.encode(model, forKey: .model)
        try c.encode(firmware, forKey: .firmware)
        try c.encode(sim, forKey: .sim)
        try c.encode(network, forKey: .network)
        try c.encode(apn, forKey: .apn)
        try c.encode(ipType.rawValue, forKey: .ipType)
        try c.encode(nat64, forKey: .nat64)
        try c.encode(faults, forKey: .faults)
        try c.encodeIfPresent(reportedIP, forKey: .reportedIP)
        try c.encode(secondSlot, forKey: .secondSlot)
        try c.encode(activeSlot, forKey: .activeSlot)
        try c.encodeIfPresent(capturedProfile.map(DeviceShape.init(profile:)), forKey: .deviceShape)
        if modemManagerIgnore { try c.encode(true, forKey: .modemManagerIgnore) }
        try c.encodeIfPresent(gnss, forKey: .gnss)
    }
}

/// A modem's GNSS fix: where (WGS 84 decimal degrees), how precisely (metres, the circular
/// horizontal uncertainty), and how old it is when reported (seconds).
public struct SimulatedGNSS: Sendable, Equatable, Encodable {
    public var lat: Double
    public var lon: Double
    public var accuracy: Double = 10
    public var ageSeconds: Double = 0

    public init(lat: Double, lon: Double, accuracy: Double = 10, ageSeconds: Double = 0) {
        self.lat = lat
        self.lon = lon
        self.accuracy = accuracy
        self.ageSeconds = ageSeconds
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case lat, lon, accuracy, ageSeconds }
}

/// The second slot of a dual-SIM modem: a physical slot or an eSIM, with its SIM (for an eSIM:
/// its enabled profile) or none (an empty slot; an eSIM without an enabled profile), and the
/// network its SIM registers on (nil: the modem's).
public struct SecondSIMSlot: Sendable, Equatable, Encodable {
    public var esim: Bool
    public var sim: SimulatedSIM?
    public var network: SimulatedNetwork?
    public init(esim: Bool = true, sim: SimulatedSIM? = nil, network: SimulatedNetwork? = nil) {
        self.esim = esim
        self.sim = sim
        self.network = network
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case esim, sim, network }

    /// Writes `sim` as an explicit null when there is none; `network` only when the slot has its own.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(esim, forKey: .esim)
        try c.encode(sim, forKey: .sim)
        try c.encodeIfPresent(network, forKey: .network)
    }
}

/// A modem's report of its bearer's IP configuration that differs from what the carrier
/// assigned: each field given replaces the assignment's in the modem's answers (MBIM IP
/// Configuration, QMI Get Current Settings), while the data path still carries the assigned
/// addresses. For testing how the client meets 0.0.0.0 or local DNS servers, link-local IPv6,
/// absurd MTUs and addresses that clash with another interface's.
public struct ReportedIPConfiguration: Sendable, Equatable, Encodable {
    /// Reported instead of the assigned IPv4 address (on a bearer with IPv4).
    public var ipv4Address: String? = nil
    /// Reported instead of the assigned IPv6 address (on a bearer with IPv6).
    public var ipv6Address: String? = nil
    /// Reported instead of the DNS servers of both families: each server with its family's settings.
    public var dnsServers: [String]? = nil
    /// Reported instead of the MTU (1500); 0 reports none.
    public var mtu: Int? = nil
    public init(ipv4Address: String? = nil, ipv6Address: String? = nil, dnsServers: [String]? = nil, mtu: Int? = nil) {
        self.ipv4Address = ipv4Address
        self.ipv6Address = ipv6Address
        self.dnsServers = dnsServers
        self.mtu = mtu
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case ipv4Address, ipv6Address, dnsServers, mtu }
}

extension BearerIPType {
    /// Whether a bearer of this type carries IPv4.
    public var carriesIPv4: Bool { self != .ipv6 }
    /// Whether a bearer of this type carries IPv6.
    public var carriesIPv6: Bool { self != .ipv4 }

    /// The type that carries exactly these families, or nil for none.
    public init?(carryingIPv4 ipv4: Bool, ipv6: Bool) {
        switch (ipv4, ipv6) {
        case (true, true): self = .ipv4v6
        case (true, false): self = .ipv4
        case (false, true): self = .ipv6
        case (false, false): return nil
        }
    }

    /// What a network offering `offered` grants a request for this type: the families in both,
    /// or nil when they have none in common (the network refuses the connect).
    public func granted(by offered: BearerIPType) -> BearerIPType? {
        BearerIPType(carryingIPv4: carriesIPv4 && offered.carriesIPv4, ipv6: carriesIPv6 && offered.carriesIPv6)
    }
}

/// A SIM card: identities, PIN state and when it was last changed (SIM swap).
public struct SimulatedSIM: Sendable, Equatable, Encodable {
    public var iccid: String
    public var imsi: String
    /// The subscriber's number in E.164 with '+'.
    public var msisdn: String
    /// PIN1 state: when `pinLocked`, the PIN must be entered before the SIM is ready.
    public var pinLocked: Bool
    public var pin: String
    public var pinAttemptsLeft: Int
    /// Minutes since the SIM was last changed for this number; nil = not within any period.
    public var simChangedMinutesAgo: Int?

    public init(
        iccid: String = SimulatedSIM.defaultICCID(index: 0), imsi: String = SimulatedSIM.defaultIMSI(index: 0),
        msisdn: String = SimulatedSIM.defaultMSISDN(index: 0), pinLocked: Bool = false, pin: String = "1234",
        pinAttemptsLeft: Int = 3, simChangedMinutesAgo: Int? = nil
    ) {
        self.iccid = iccid
        self.imsi = imsi
        self.msisdn = msisdn
        self.pinLocked = pinLocked
        self.pin = pin
        self.pinAttemptsLeft = pinAttemptsLeft
        self.simChangedMinutesAgo = simChangedMinutesAgo
    }

    /// The default SIM of modem `index`: identities derived from the index, the other fields' defaults.
    public init(index: Int) {
        self.init(
            iccid: Self.defaultICCID(index: index), imsi: Self.defaultIMSI(index: index),
            msisdn: Self.defaultMSISDN(index: index))
    }

    /// ICCID: issuer 89 001 01, account 234567890 + (12 + index) as two digits, Luhn check digit.
    public static func defaultICCID(index: Int) -> String {
        Luhn.appendingCheckDigit(to: "8900101234567890" + digits(12 + index, width: 2))
    }

    /// IMSI on the default network 001-01: MSIN 0123456789 + index.
    public static func defaultIMSI(index: Int) -> String { "00101" + digits(123_456_789 + index, width: 10) }

    /// A UK mobile number: +44 7940448591 + index.
    public static func defaultMSISDN(index: Int) -> String { "+44" + digits(7_940_448_591 + index, width: 10) }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case iccid, imsi, msisdn, pinLocked, pin, pinAttemptsLeft, simChangedMinutesAgo
    }
}

/// The network a modem is registered on.
public struct SimulatedNetwork: Sendable, Equatable, Encodable {
    public var mcc: String
    public var mnc: String
    public var operatorName: String
    public var roaming: Bool
    /// Received signal strength in dBm.
    public var rssiDbm: Int
    /// How the fake API's check_url answers a device on this network (per modem), if it refuses it.
    public var checkURLError: CheckURLError?
    /// The cells the modem can camp on; it starts on the first (a handover moves it). Without
    /// cells in the scenario, one LTE cell with `rssiDbm`.
    public var cells: [SimulatedCell]

    public init(
        mcc: String = "001", mnc: String = "01", operatorName: String = "cellpath sim",
        roaming: Bool = false, rssiDbm: Int = -71, checkURLError: CheckURLError? = nil, cells: [SimulatedCell]? = nil
    ) {
        self.mcc = mcc
        self.mnc = mnc
        self.operatorName = operatorName
        self.roaming = roaming
        self.rssiDbm = rssiDbm
        self.checkURLError = checkURLError
        self.cells = cells ?? [SimulatedCell(rssiDbm: rssiDbm)]
    }

    /// MCC-MNC as the scenario writes an operator, e.g. `001-01`.
    public var operatorID: String { "\(mcc)-\(mnc)" }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case mcc, mnc, operatorName, roaming, rssiDbm, checkURLError, cells
    }
}

/// A check_url answer that refuses a device's operator, as tru.ID's API gives it:
/// `400 #mno_not_supported` or `501 #mno_redirect_unsupported`.
public enum CheckURLError: String, Sendable, Equatable, Codable, CaseIterable {
    case mnoNotSupported, mnoRedirectUnsupported
}

/// A check_url refusal for every device on one operator (`api.checkURLErrors[i]`).
public struct OperatorCheckURLError: Sendable, Equatable, Encodable {
    /// MCC-MNC, e.g. `001-01` (as `SimulatedNetwork.operatorID`).
    public var `operator`: String
    public var error: CheckURLError

    public init(operator: String, error: CheckURLError) {
        self.operator = `operator`
        self.error = error
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case `operator`, error }
}

/// The conditions of one path (cellular or Wi-Fi), applied by the simulator's relay to each
/// direction on its own: one-way delay, jitter and loss, with optional per-direction overrides.
public struct LinkConditions: Sendable, Equatable, Encodable {
    /// One-way delay in milliseconds (a round trip takes twice this).
    public var delayMs: Int
    /// Each packet's delay varies uniformly within ±jitterMs (packets are never reordered).
    public var jitterMs: Int
    /// Share of packets dropped, 0…100.
    public var lossPercent: Double
    /// Overrides for device → network packets only.
    public var uplink: DirectionOverride?
    /// Overrides for network → device packets only.
    public var downlink: DirectionOverride?

    public init(
        delayMs: Int = 0, jitterMs: Int = 0, lossPercent: Double = 0,
        uplink: DirectionOverride? = nil, downlink: DirectionOverride? = nil
    ) {
        self.delayMs = delayMs
        self.jitterMs = jitterMs
        self.lossPercent = lossPercent
        self.uplink = uplink
        self.downlink = downlink
    }

    /// The effective conditions of one direction: the path's values with that direction's overrides.
    public func direction(uplink isUplink: Bool) -> LinkConditions {
        let override = isUplink ? uplink : downlink
        return LinkConditions(
            delayMs: override?.delayMs ?? delayMs, jitterMs: override?.jitterMs ?? jitterMs,
            lossPercent: override?.lossPercent ?? lossPercent)
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case delayMs, jitterMs, lossPercent, uplink, downlink }
}

/// Per-direction values that replace a path's own; absent fields keep the path's value.
public struct DirectionOverride: Sendable, Equatable, Encodable {
    public var delayMs: Int?
    public var jitterMs: Int?
    public var lossPercent: Double?

    public init(delayMs: Int? = nil, jitterMs: Int? = nil, lossPercent: Double? = nil) {
        self.delayMs = delayMs
        self.jitterMs = jitterMs
        self.lossPercent = lossPercent
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case delayMs, jitterMs, lossPercent }
}

/// The registration a simulated modem's network grants, as a scenario fault.
public enum RegistrationFault: String, Sendable, Equatable, Codable, CaseIterable {
    case registered, searching, denied, deregistered
}

/// Faults of a simulated modem's control plane (issue: simulated modems).
public struct ModemFaults: Sendable, Equatable, Encodable {
    public var radioOff: Bool = false
    /// The network's answer to registration (`registered` by default).
    public var registration: RegistrationFault = .registered
    /// Reject connect with this MBIM network error / QMI call-end reason (numeric), if set.
    public var connectRejectCode: Int? = nil
    /// Drop a connected bearer after this many seconds, with its indication.
    public var dropBearerAfterSeconds: Int? = nil
    /// Delay every response by this many milliseconds.
    public var responseDelayMs: Int = 0
    /// Send this many garbage frames to the client after OPEN / CTL sync.
    public var garbageFrames: Int = 0
    /// After a reset (re-enumeration), delay every response by this many milliseconds more…
    public var slowAfterResetMs: Int = 0
    /// …for this many seconds after the modem came back.
    public var slowAfterResetSeconds: Int = 10
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case radioOff, registration, connectRejectCode, dropBearerAfterSeconds, responseDelayMs, garbageFrames
        case slowAfterResetMs, slowAfterResetSeconds
    }
}

/// The scenario's `api` object: faults of the fake tru.ID API and the settings of its one project.
public struct APIFaults: Sendable, Equatable, Encodable {
    /// The default of `rateLimitPerHour`.
    public static let defaultRateLimitPerHour = 1000
    /// The default of `retainedChecks`.
    public static let defaultRetainedChecks = 10_000

    /// Answer every API request with this 5xx status, if set.
    public var serverErrorStatus: Int? = nil
    /// Delay every API response by this many milliseconds.
    public var slowMs: Int = 0
    /// Return a truncated, malformed JSON body on check creation.
    public var malformedJSON: Bool = false
    /// Answer check creation with 429 and `Retry-After` this many seconds, if set.
    public var rateLimitRetryAfter: Int? = nil
    /// With `serverErrorStatus` or `rateLimitRetryAfter`: the fault answers only every Nth request
    /// it applies to, the others are served (faults amid successes); nil = every one.
    public var faultEvery: Int? = nil
    /// Authenticated requests per client and hour before 429; nil = unlimited.
    public var rateLimitPerHour: Int? = APIFaults.defaultRateLimitPerHour
    /// Sandbox mode: a number ending in an even digit matches, an odd one does not, `…99` is an error.
    public var sandbox: Bool = false
    /// The project's `callback_url`: PhoneCheck and SubscriberCheck webhooks are POSTed here, signed.
    public var callbackURL: String? = nil
    /// check_url refusals per operator.
    public var checkURLErrors: [OperatorCheckURLError] = []
    /// Seconds a check lives before it is EXPIRED (tru.ID: 120).
    public var checkTTLSeconds: Int = 120
    /// Seconds an access token is valid (tru.ID: 3600).
    public var tokenLifetimeSeconds: Int = 3600
    /// Checks the API remembers at most; beyond, it forgets the oldest (EXPIRED ones first).
    public var retainedChecks: Int = APIFaults.defaultRetainedChecks
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case serverErrorStatus, slowMs, malformedJSON, rateLimitRetryAfter, faultEvery, rateLimitPerHour, sandbox,
            callbackURL,
            checkURLErrors,
            checkTTLSeconds, tokenLifetimeSeconds, retainedChecks
    }

    /// Writes every field; `rateLimitPerHour` as an explicit null when unlimited (absent means the default).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(serverErrorStatus, forKey: .serverErrorStatus)
        try c.encode(slowMs, forKey: .slowMs)
        try c.encode(malformedJSON, forKey: .malformedJSON)
        try c.encodeIfPresent(rateLimitRetryAfter, forKey: .rateLimitRetryAfter)
        try c.encodeIfPresent(faultEvery, forKey: .faultEvery)
        try c.encode(rateLimitPerHour, forKey: .rateLimitPerHour)
        try c.encode(sandbox, forKey: .sandbox)
        try c.encodeIfPresent(callbackURL, forKey: .callbackURL)
        try c.encode(checkURLErrors, forKey: .checkURLErrors)
        try c.encode(checkTTLSeconds, forKey: .checkTTLSeconds)
        try c.encode(tokenLifetimeSeconds, forKey: .tokenLifetimeSeconds)
        try c.encode(retainedChecks, forKey: .retainedChecks)
    }
}

/// Faults of the carrier's identification endpoint and of the check_url chain.
public struct CarrierFaults: Sendable, Equatable, Encodable {
    /// Never answer (the client's hop timeout must fire).
    public var timeout: Bool = false
    /// Set a cookie on the first hop and require it on the next.
    public var requireCookies: Bool = false
    /// Use a relative `Location` with a query string.
    public var relativeLocation: Bool = false
    /// Extra redirect hops inside the carrier before identification.
    public var extraHops: Int = 0
    /// Redirect in a loop forever.
    public var redirectLoop: Bool = false
    /// Send the client from https to plain http on the way back to the API.
    public var httpsDowngrade: Bool = false
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case timeout, requireCookies, relativeLocation, extraHops, redirectLoop, httpsDowngrade
    }
}

/// What the fake API and the carrier need to know about subscribers: the simulator's live
/// state (which SIM holds which bearer address). Implemented by the world's daemon.
public protocol SubscriberDirectory: Sendable {
    /// The SIM whose connected bearer currently holds `address`, or nil.
    func subscriber(holding address: String) -> SimulatedSIM?
    /// The SIM with this E.164 number, or nil.
    func subscriber(msisdn: String) -> SimulatedSIM?
    /// The network of the modem holding `address` (for coverage `device_ip`), or nil.
    func network(holding address: String) -> SimulatedNetwork?
}

/// Check digits of IMEIs and ICCIDs.
enum Luhn {
    /// `digits` followed by their Luhn check digit.
    static func appendingCheckDigit(to digits: String) -> String {
        var sum = 0
        for (i, character) in digits.reversed().enumerated() {
            var d = Int(character.asciiValue! - 0x30)
            if i % 2 == 0 { d *= 2; if d > 9 { d -= 9 } }
            sum += d
        }
        return digits + String((10 - sum % 10) % 10)
    }
}

/// `value` in decimal with leading zeros to `width` digits.
public func digits(_ value: Int, width: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, width - text.count)) + text
}
