import CellpathCore
import FoundationEssentials

/// A simulated world: its modems (each with a SIM and a data path), the path delays, and the
/// faults of the fake API and the carrier. Loaded from JSON (docs/simulator.md); every field
/// has a default so that `{}` is the built-in default world.
public struct Scenario: Sendable, Equatable, Codable {
    public var modems: [SimulatedModem]
    public var cellularPath: PathConditions
    public var wifiPath: PathConditions
    public var api: APIFaults
    public var carrier: CarrierFaults

    public init(modems: [SimulatedModem] = [SimulatedModem()],
                cellularPath: PathConditions = PathConditions(delayMs: 40),
                wifiPath: PathConditions = PathConditions(delayMs: 5),
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

    enum CodingKeys: String, CodingKey { case modems, cellularPath, wifiPath, api, carrier }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        modems = try c.decodeIfPresent([SimulatedModem].self, forKey: .modems) ?? [SimulatedModem()]
        cellularPath = try c.decodeIfPresent(PathConditions.self, forKey: .cellularPath) ?? PathConditions(delayMs: 40)
        wifiPath = try c.decodeIfPresent(PathConditions.self, forKey: .wifiPath) ?? PathConditions(delayMs: 5)
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

    enum CodingKeys: String, CodingKey { case `protocol`, imei, manufacturer, model, firmware, sim, network, apn, faults }

    public init(from decoder: any Decoder) throws {
        let d = SimulatedModem()
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

    enum CodingKeys: String, CodingKey { case iccid, imsi, msisdn, pinLocked, pin, pinAttemptsLeft, simChangedMinutesAgo }

    public init(from decoder: any Decoder) throws {
        let d = SimulatedSIM()
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

    enum CodingKeys: String, CodingKey { case mcc, mnc, operatorName, roaming, rssiDbm }

    public init(from decoder: any Decoder) throws {
        let d = SimulatedNetwork()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        mcc = try c.decodeIfPresent(String.self, forKey: .mcc) ?? d.mcc
        mnc = try c.decodeIfPresent(String.self, forKey: .mnc) ?? d.mnc
        operatorName = try c.decodeIfPresent(String.self, forKey: .operatorName) ?? d.operatorName
        roaming = try c.decodeIfPresent(Bool.self, forKey: .roaming) ?? d.roaming
        rssiDbm = try c.decodeIfPresent(Int.self, forKey: .rssiDbm) ?? d.rssiDbm
    }
}

/// One direction-symmetric link condition applied by the simulator's relay.
public struct PathConditions: Sendable, Equatable, Codable {
    public var delayMs: Int
    public var jitterMs: Int
    public var lossPercent: Double

    public init(delayMs: Int = 0, jitterMs: Int = 0, lossPercent: Double = 0) {
        self.delayMs = delayMs
        self.jitterMs = jitterMs
        self.lossPercent = lossPercent
    }

    enum CodingKeys: String, CodingKey { case delayMs, jitterMs, lossPercent }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        delayMs = try c.decodeIfPresent(Int.self, forKey: .delayMs) ?? 0
        jitterMs = try c.decodeIfPresent(Int.self, forKey: .jitterMs) ?? 0
        lossPercent = try c.decodeIfPresent(Double.self, forKey: .lossPercent) ?? 0
    }
}

/// Faults of a simulated modem's control plane (issue: simulated modems).
public struct ModemFaults: Sendable, Equatable, Codable {
    public var radioOff: Bool = false
    /// `registered` (default), `searching`, `denied`, `deregistered`.
    public var registration: String = "registered"
    /// Reject connect with this MBIM network error / QMI call-end reason (numeric), if set.
    public var connectRejectCode: Int? = nil
    /// Drop a connected bearer after this many seconds, with its indication.
    public var dropBearerAfterSeconds: Int? = nil
    /// Delay every response by this many milliseconds.
    public var responseDelayMs: Int = 0
    /// Send this many garbage frames to the client after OPEN / CTL sync.
    public var garbageFrames: Int = 0
    public init() {}

    enum CodingKeys: String, CodingKey { case radioOff, registration, connectRejectCode, dropBearerAfterSeconds, responseDelayMs, garbageFrames }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        radioOff = try c.decodeIfPresent(Bool.self, forKey: .radioOff) ?? false
        registration = try c.decodeIfPresent(String.self, forKey: .registration) ?? "registered"
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

    enum CodingKeys: String, CodingKey { case serverErrorStatus, slowMs, malformedJSON, rateLimitRetryAfter }

    public init(from decoder: any Decoder) throws {
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

    enum CodingKeys: String, CodingKey { case timeout, requireCookies, relativeLocation, extraHops, redirectLoop, httpsDowngrade }

    public init(from decoder: any Decoder) throws {
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
