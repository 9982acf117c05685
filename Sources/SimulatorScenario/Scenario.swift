import CellpathCore
import FoundationEssentials
import Glibc
import SystemSupport

/// A simulated world: its modems (each with a SIM and a data path), the path delays, and the
/// faults of the fake API and the carrier. Loaded from JSON (docs/simulator.md); every field
/// has a default so that `{}` is the built-in default world.
public struct Scenario: Sendable, Equatable, Codable {
    public var modems: [SimulatedModem]
    public var cellularPath: LinkConditions
    public var wifiPath: LinkConditions
    public var api: APIFaults
    public var carrier: CarrierFaults

    public init(modems: [SimulatedModem] = [SimulatedModem()],
                cellularPath: LinkConditions = LinkConditions(delayMs: 40),
                wifiPath: LinkConditions = LinkConditions(delayMs: 5),
                api: APIFaults = APIFaults(), carrier: CarrierFaults = CarrierFaults()) {
        self.modems = modems
        self.cellularPath = cellularPath
        self.wifiPath = wifiPath
        self.api = api
        self.carrier = carrier
    }

    /// The built-in default: one MBIM modem, one SIM on operator 001-01 "cellpath sim",
    /// 40 ms one-way on the cellular path, 5 ms on Wi-Fi.
    public static let builtIn = Scenario()

    enum CodingKeys: String, CodingKey, CaseIterable { case modems, cellularPath, wifiPath, api, carrier }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        modems = try c.decodeIfPresent([SimulatedModem].self, forKey: .modems) ?? [SimulatedModem()]
        cellularPath = try c.decodeIfPresent(LinkConditions.self, forKey: .cellularPath) ?? LinkConditions(delayMs: 40)
        wifiPath = try c.decodeIfPresent(LinkConditions.self, forKey: .wifiPath) ?? LinkConditions(delayMs: 5)
        api = try c.decodeIfPresent(APIFaults.self, forKey: .api) ?? APIFaults()
        carrier = try c.decodeIfPresent(CarrierFaults.self, forKey: .carrier) ?? CarrierFaults()
    }
}

/// Which control protocol a simulated modem speaks on its pseudo-terminal.
public enum ModemProtocol: String, Sendable, Codable { case mbim, qmi }

/// One simulated modem with its SIM, its serving network and its faults.
public struct SimulatedModem: Sendable, Equatable, Codable {
    public var `protocol`: ModemProtocol
    public var imei: String
    public var manufacturer: String
    public var model: String
    public var firmware: String
    public var sim: SimulatedSIM?
    public var network: SimulatedNetwork
    public var apn: String
    public var faults: ModemFaults

    public init(protocol: ModemProtocol = .mbim, imei: String = "351234567890123",
                manufacturer: String = "cellpath", model: String = "Simulated LTE modem",
                firmware: String = "SIM.1.0", sim: SimulatedSIM? = SimulatedSIM(),
                network: SimulatedNetwork = SimulatedNetwork(), apn: String = "internet",
                faults: ModemFaults = ModemFaults()) {
        self.protocol = `protocol`
        self.imei = imei
        self.manufacturer = manufacturer
        self.model = model
        self.firmware = firmware
        self.sim = sim
        self.network = network
        self.apn = apn
        self.faults = faults
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case `protocol`, imei, manufacturer, model, firmware, sim, network, apn, faults }

    public init(from decoder: any Decoder) throws {
        let d = SimulatedModem()
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        `protocol` = try c.decodeIfPresent(ModemProtocol.self, forKey: .protocol) ?? d.protocol
        imei = try c.decodeIfPresent(String.self, forKey: .imei) ?? d.imei
        manufacturer = try c.decodeIfPresent(String.self, forKey: .manufacturer) ?? d.manufacturer
        model = try c.decodeIfPresent(String.self, forKey: .model) ?? d.model
        firmware = try c.decodeIfPresent(String.self, forKey: .firmware) ?? d.firmware
        // An explicit `"sim": null` means no SIM inserted.
        sim = c.contains(.sim) ? try c.decodeIfPresent(SimulatedSIM.self, forKey: .sim) : d.sim
        network = try c.decodeIfPresent(SimulatedNetwork.self, forKey: .network) ?? d.network
        apn = try c.decodeIfPresent(String.self, forKey: .apn) ?? d.apn
        faults = try c.decodeIfPresent(ModemFaults.self, forKey: .faults) ?? d.faults
    }
}

/// A SIM card: identities, PIN state and when it was last changed (SIM swap).
public struct SimulatedSIM: Sendable, Equatable, Codable {
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

    public init(iccid: String = "8900101234567890123", imsi: String = "001010123456789",
                msisdn: String = "+447940448591", pinLocked: Bool = false, pin: String = "1234",
                pinAttemptsLeft: Int = 3, simChangedMinutesAgo: Int? = nil) {
        self.iccid = iccid
        self.imsi = imsi
        self.msisdn = msisdn
        self.pinLocked = pinLocked
        self.pin = pin
        self.pinAttemptsLeft = pinAttemptsLeft
        self.simChangedMinutesAgo = simChangedMinutesAgo
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case iccid, imsi, msisdn, pinLocked, pin, pinAttemptsLeft, simChangedMinutesAgo }

    public init(from decoder: any Decoder) throws {
        let d = SimulatedSIM()
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        iccid = try c.decodeIfPresent(String.self, forKey: .iccid) ?? d.iccid
        imsi = try c.decodeIfPresent(String.self, forKey: .imsi) ?? d.imsi
        msisdn = try c.decodeIfPresent(String.self, forKey: .msisdn) ?? d.msisdn
        pinLocked = try c.decodeIfPresent(Bool.self, forKey: .pinLocked) ?? d.pinLocked
        pin = try c.decodeIfPresent(String.self, forKey: .pin) ?? d.pin
        pinAttemptsLeft = try c.decodeIfPresent(Int.self, forKey: .pinAttemptsLeft) ?? d.pinAttemptsLeft
        simChangedMinutesAgo = try c.decodeIfPresent(Int.self, forKey: .simChangedMinutesAgo)
    }
}

/// The network a modem is registered on.
public struct SimulatedNetwork: Sendable, Equatable, Codable {
    public var mcc: String
    public var mnc: String
    public var operatorName: String
    public var roaming: Bool
    /// Received signal strength in dBm.
    public var rssiDbm: Int

    public init(mcc: String = "001", mnc: String = "01", operatorName: String = "cellpath sim",
                roaming: Bool = false, rssiDbm: Int = -71) {
        self.mcc = mcc
        self.mnc = mnc
        self.operatorName = operatorName
        self.roaming = roaming
        self.rssiDbm = rssiDbm
    }

    /// MCC-MNC as the tru.ID SDKs send it in `x-tru-ops`, e.g. `001-01`.
    public var operatorID: String { "\(mcc)-\(mnc)" }

    enum CodingKeys: String, CodingKey, CaseIterable { case mcc, mnc, operatorName, roaming, rssiDbm }

    public init(from decoder: any Decoder) throws {
        let d = SimulatedNetwork()
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        mcc = try c.decodeIfPresent(String.self, forKey: .mcc) ?? d.mcc
        mnc = try c.decodeIfPresent(String.self, forKey: .mnc) ?? d.mnc
        operatorName = try c.decodeIfPresent(String.self, forKey: .operatorName) ?? d.operatorName
        roaming = try c.decodeIfPresent(Bool.self, forKey: .roaming) ?? d.roaming
        rssiDbm = try c.decodeIfPresent(Int.self, forKey: .rssiDbm) ?? d.rssiDbm
    }
}

/// The conditions of one path (cellular or Wi-Fi), applied by the simulator's relay to each
/// direction on its own: one-way delay, jitter and loss, with optional per-direction overrides.
public struct LinkConditions: Sendable, Equatable, Codable {
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

    public init(delayMs: Int = 0, jitterMs: Int = 0, lossPercent: Double = 0,
                uplink: DirectionOverride? = nil, downlink: DirectionOverride? = nil) {
        self.delayMs = delayMs
        self.jitterMs = jitterMs
        self.lossPercent = lossPercent
        self.uplink = uplink
        self.downlink = downlink
    }

    /// The effective conditions of one direction: the path's values with that direction's overrides.
    public func direction(uplink isUplink: Bool) -> LinkConditions {
        let override = isUplink ? uplink : downlink
        return LinkConditions(delayMs: override?.delayMs ?? delayMs, jitterMs: override?.jitterMs ?? jitterMs,
                              lossPercent: override?.lossPercent ?? lossPercent)
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case delayMs, jitterMs, lossPercent, uplink, downlink }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        delayMs = try c.decodeIfPresent(Int.self, forKey: .delayMs) ?? 0
        jitterMs = try c.decodeIfPresent(Int.self, forKey: .jitterMs) ?? 0
        lossPercent = try c.decodeIfPresent(Double.self, forKey: .lossPercent) ?? 0
        uplink = try c.decodeIfPresent(DirectionOverride.self, forKey: .uplink)
        downlink = try c.decodeIfPresent(DirectionOverride.self, forKey: .downlink)
    }
}

/// Per-direction values that replace a path's own; absent fields keep the path's value.
public struct DirectionOverride: Sendable, Equatable, Codable {
    public var delayMs: Int?
    public var jitterMs: Int?
    public var lossPercent: Double?

    public init(delayMs: Int? = nil, jitterMs: Int? = nil, lossPercent: Double? = nil) {
        self.delayMs = delayMs
        self.jitterMs = jitterMs
        self.lossPercent = lossPercent
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case delayMs, jitterMs, lossPercent }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        delayMs = try c.decodeIfPresent(Int.self, forKey: .delayMs)
        jitterMs = try c.decodeIfPresent(Int.self, forKey: .jitterMs)
        lossPercent = try c.decodeIfPresent(Double.self, forKey: .lossPercent)
    }
}

/// The registration a simulated modem's network grants, as a scenario fault.
public enum RegistrationFault: String, Sendable, Equatable, Codable, CaseIterable {
    case registered, searching, denied, deregistered
}

/// Faults of a simulated modem's control plane (issue: simulated modems).
public struct ModemFaults: Sendable, Equatable, Codable {
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
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable { case radioOff, registration, connectRejectCode, dropBearerAfterSeconds, responseDelayMs, garbageFrames }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        radioOff = try c.decodeIfPresent(Bool.self, forKey: .radioOff) ?? false
        if let text = try c.decodeIfPresent(String.self, forKey: .registration) {
            guard let value = RegistrationFault(rawValue: text) else {
                throw DecodingError.dataCorruptedError(forKey: .registration, in: c, debugDescription:
                    "must be one of \(RegistrationFault.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            registration = value
        }
        connectRejectCode = try c.decodeIfPresent(Int.self, forKey: .connectRejectCode)
        dropBearerAfterSeconds = try c.decodeIfPresent(Int.self, forKey: .dropBearerAfterSeconds)
        responseDelayMs = try c.decodeIfPresent(Int.self, forKey: .responseDelayMs) ?? 0
        garbageFrames = try c.decodeIfPresent(Int.self, forKey: .garbageFrames) ?? 0
    }
}

/// Faults of the fake tru.ID API.
public struct APIFaults: Sendable, Equatable, Codable {
    /// Answer every API request with this 5xx status, if set.
    public var serverErrorStatus: Int? = nil
    /// Delay every API response by this many milliseconds.
    public var slowMs: Int = 0
    /// Return a truncated, malformed JSON body on check creation.
    public var malformedJSON: Bool = false
    /// Answer check creation with 429 and `Retry-After` this many seconds, if set.
    public var rateLimitRetryAfter: Int? = nil
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable { case serverErrorStatus, slowMs, malformedJSON, rateLimitRetryAfter }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        serverErrorStatus = try c.decodeIfPresent(Int.self, forKey: .serverErrorStatus)
        slowMs = try c.decodeIfPresent(Int.self, forKey: .slowMs) ?? 0
        malformedJSON = try c.decodeIfPresent(Bool.self, forKey: .malformedJSON) ?? false
        rateLimitRetryAfter = try c.decodeIfPresent(Int.self, forKey: .rateLimitRetryAfter)
    }
}

/// Faults of the carrier's identification endpoint and of the check_url chain.
public struct CarrierFaults: Sendable, Equatable, Codable {
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

    enum CodingKeys: String, CodingKey, CaseIterable { case timeout, requireCookies, relativeLocation, extraHops, redirectLoop, httpsDowngrade }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        timeout = try c.decodeIfPresent(Bool.self, forKey: .timeout) ?? false
        requireCookies = try c.decodeIfPresent(Bool.self, forKey: .requireCookies) ?? false
        relativeLocation = try c.decodeIfPresent(Bool.self, forKey: .relativeLocation) ?? false
        extraHops = try c.decodeIfPresent(Int.self, forKey: .extraHops) ?? 0
        redirectLoop = try c.decodeIfPresent(Bool.self, forKey: .redirectLoop) ?? false
        httpsDowngrade = try c.decodeIfPresent(Bool.self, forKey: .httpsDowngrade) ?? false
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

// MARK: - Loading and validation

extension Scenario {
    /// Decodes and validates a scenario from JSON; errors name the offending field (`.dataError`).
    public static func decode(_ data: [UInt8], source: String = "scenario") throws -> Scenario {
        let scenario: Scenario
        do {
            scenario = try JSONDecoder().decode(Scenario.self, from: Data(data))
        } catch let error as DecodingError {
            throw CellpathError(.dataError, "\(source): \(Self.describe(error))",
                                hint: "see docs/simulator.md for the scenario file format")
        }
        try scenario.validate(source: source)
        return scenario
    }

    /// Reads, decodes and validates the scenario file at `path`.
    public static func load(path: String) throws -> Scenario {
        guard let fd = Optional(open(path, O_RDONLY | O_CLOEXEC)), fd >= 0 else {
            let reason = SystemError.text(errno)
            throw CellpathError(errno == ENOENT ? .dataError : .unavailable,
                                "cannot read scenario file \(path): \(reason)")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw CellpathError(.unavailable, "cannot read scenario file \(path): \(SystemError.text(errno))") }
            if n == 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
            if bytes.count > 1 << 20 { throw CellpathError(.dataError, "\(path): scenario file larger than 1 MiB") }
        }
        return try decode(bytes, source: path)
    }

    /// The scenario as pretty JSON (all fields, defaults included).
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return Array((try? encoder.encode(self)) ?? Data())
    }

    /// Largest number of modems one world holds (bearer addresses 100.64.23.10 … .41).
    public static let maximumModems = 32

    /// Checks every field's range and format; throws `.dataError` naming the first bad field.
    public func validate(source: String = "scenario") throws {
        func bad(_ field: String, _ problem: String) -> CellpathError {
            CellpathError(.dataError, "\(source): \(field): \(problem)",
                          hint: "see docs/simulator.md for the scenario file format")
        }
        if modems.isEmpty { throw bad("modems", "at least one modem is required") }
        if modems.count > Self.maximumModems { throw bad("modems", "at most \(Self.maximumModems) modems are supported, got \(modems.count)") }
        var msisdns: Set<String> = []
        for (i, modem) in modems.enumerated() {
            let m = "modems[\(i)]"
            if !Self.isDigits(modem.imei, count: 15...15) { throw bad("\(m).imei", "must be 15 digits") }
            if modem.apn.isEmpty || modem.apn.count > 100 { throw bad("\(m).apn", "must be 1 to 100 characters") }
            for (name, value) in [("manufacturer", modem.manufacturer), ("model", modem.model), ("firmware", modem.firmware)]
            where value.isEmpty || value.count > 64 || value.contains(where: { $0.isNewline }) {
                throw bad("\(m).\(name)", "must be 1 to 64 characters on one line")
            }
            if let sim = modem.sim {
                let s = "\(m).sim"
                if !Self.isDigits(sim.iccid, count: 18...20) { throw bad("\(s).iccid", "must be 18 to 20 digits") }
                if !Self.isDigits(sim.imsi, count: 6...15) { throw bad("\(s).imsi", "must be 6 to 15 digits") }
                if !sim.msisdn.hasPrefix("+") || !Self.isDigits(String(sim.msisdn.dropFirst()), count: 7...15) {
                    throw bad("\(s).msisdn", "must be E.164 with a leading '+', e.g. +447940448591")
                }
                if !msisdns.insert(sim.msisdn).inserted { throw bad("\(s).msisdn", "\(sim.msisdn) is used by two SIMs") }
                if !Self.isDigits(sim.pin, count: 4...8) { throw bad("\(s).pin", "must be 4 to 8 digits") }
                if !(0...3).contains(sim.pinAttemptsLeft) { throw bad("\(s).pinAttemptsLeft", "must be 0 to 3") }
                if let minutes = sim.simChangedMinutesAgo, minutes < 0 { throw bad("\(s).simChangedMinutesAgo", "must not be negative") }
            }
            let n = "\(m).network"
            if !Self.isDigits(modem.network.mcc, count: 3...3) { throw bad("\(n).mcc", "must be 3 digits") }
            if !Self.isDigits(modem.network.mnc, count: 2...3) { throw bad("\(n).mnc", "must be 2 or 3 digits") }
            if modem.network.operatorName.isEmpty || modem.network.operatorName.count > 64 { throw bad("\(n).operatorName", "must be 1 to 64 characters") }
            if !(-130 ... -20).contains(modem.network.rssiDbm) { throw bad("\(n).rssiDbm", "must be between -130 and -20 dBm") }
            let f = "\(m).faults"
            if let code = modem.faults.connectRejectCode, code < 0 { throw bad("\(f).connectRejectCode", "must not be negative") }
            if let after = modem.faults.dropBearerAfterSeconds, after < 1 { throw bad("\(f).dropBearerAfterSeconds", "must be at least 1") }
            if !(0...60_000).contains(modem.faults.responseDelayMs) { throw bad("\(f).responseDelayMs", "must be 0 to 60000") }
            if !(0...100).contains(modem.faults.garbageFrames) { throw bad("\(f).garbageFrames", "must be 0 to 100") }
        }
        for (name, path) in [("cellularPath", cellularPath), ("wifiPath", wifiPath)] {
            for (suffix, values) in [("", DirectionOverride(delayMs: path.delayMs, jitterMs: path.jitterMs, lossPercent: path.lossPercent)),
                                     (".uplink", path.uplink), (".downlink", path.downlink)] {
                guard let values else { continue }
                if let v = values.delayMs, !(0...10_000).contains(v) { throw bad("\(name)\(suffix).delayMs", "must be 0 to 10000") }
                if let v = values.jitterMs, !(0...10_000).contains(v) { throw bad("\(name)\(suffix).jitterMs", "must be 0 to 10000") }
                if let v = values.lossPercent, !(0...100).contains(v) || v.isNaN { throw bad("\(name)\(suffix).lossPercent", "must be 0 to 100") }
            }
        }
        if let status = api.serverErrorStatus, !(500...599).contains(status) { throw bad("api.serverErrorStatus", "must be a 5xx status") }
        if !(0...600_000).contains(api.slowMs) { throw bad("api.slowMs", "must be 0 to 600000") }
        if let after = api.rateLimitRetryAfter, !(0...86_400).contains(after) { throw bad("api.rateLimitRetryAfter", "must be 0 to 86400 seconds") }
        if !(0...50).contains(carrier.extraHops) { throw bad("carrier.extraHops", "must be 0 to 50") }
    }

    private static func isDigits(_ value: String, count: ClosedRange<Int>) -> Bool {
        count.contains(value.utf8.count) && value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// Turns a decoding error into "field.path: problem".
    private static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            var out = ""
            for key in keys {
                if let index = key.intValue { out += "[\(index)]" } else { out += out.isEmpty ? key.stringValue : ".\(key.stringValue)" }
            }
            return out.isEmpty ? "(top level)" : out
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(Self.typeName(type))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(Self.typeName(type)), found null"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): missing"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "not valid JSON" }
            if context.debugDescription == "unknown field" || context.debugDescription.hasPrefix("must be") {
                return "\(path(context.codingPath)): \(context.debugDescription)"
            }
            return "\(path(context.codingPath)): invalid value"
        @unknown default:
            return "invalid scenario"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type: return "an integer"
        case is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return name == "ModemProtocol" ? "\"mbim\" or \"qmi\"" : "an object"
        }
    }
}

/// Any JSON object key, to list the keys a scenario object actually has.
private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Rejects keys that are not fields of the object being decoded (a typo would otherwise be
/// silently ignored and the default used).
private func rejectUnknownKeys<K: CodingKey & CaseIterable>(_ decoder: any Decoder, _: K.Type) throws {
    let container = try decoder.container(keyedBy: AnyKey.self)
    let allowed = Set(K.allCases.map(\.stringValue))
    for key in container.allKeys where !allowed.contains(key.stringValue) {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [key],
                                                debugDescription: "unknown field"))
    }
}
