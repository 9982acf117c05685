/// What a modem reports about itself, its SIM, its network and its bearer: the state that
/// `cellpath modems` shows and that bringing up a bearer checks. Nil where the modem did not
/// (or, in its state, could not) report a value: no IMSI while the SIM waits for its PIN.
public struct ModemStatus: Sendable, Equatable {
    /// Who read it: the modem's port, or ModemManager.
    public var backend: ModemBackendName?
    public var manufacturer: String?
    public var model: String?
    public var firmware: String?
    public var imei: String?
    /// On when both the hardware and the software radio switch are on.
    public var radio: RadioState?
    public var sim: SIMStatus?
    /// The SIM's home network.
    public var homeOperator: NetworkOperator?
    public var registration: Registration?
    public var signal: Signal?
    public var packetService: PacketServiceState?
    public var bearer: BearerStatus?
    /// What the firmware negotiated or refuses, when asked for (`ModemStatusReader.readsFirmwareTraits`).
    public var firmwareTraits: FirmwareTraits?

    public init(
        manufacturer: String? = nil, model: String? = nil, firmware: String? = nil, imei: String? = nil,
        radio: RadioState? = nil, sim: SIMStatus? = nil, homeOperator: NetworkOperator? = nil,
        registration: Registration? = nil, signal: Signal? = nil, packetService: PacketServiceState? = nil,
        bearer: BearerStatus? = nil
    ) {
        self.manufacturer = manufacturer
        self.model = model
        self.firmware = firmware
        self.imei = imei
        self.radio = radio
        self.sim = sim
        self.homeOperator = homeOperator
        self.registration = registration
        self.signal = signal
        self.packetService = packetService
        self.bearer = bearer
    }

    /// The status with its personal data (IMEI, ICCID, IMSI, MSISDNs) masked unless `disclosure` is `.full`.
    public func redacted(_ disclosure: Disclosure) -> ModemStatus {
        var copy = self
        copy.imei = imei.map { disclosure.reveal($0, as: .imei) }
        copy.sim?.iccid = sim?.iccid.map { disclosure.reveal($0, as: .iccid) }
        copy.sim?.imsi = sim?.imsi.map { disclosure.reveal($0, as: .imsi) }
        copy.sim?.msisdns = sim?.msisdns.map { disclosure.reveal($0, as: .msisdn) } ?? []
        return copy
    }
}

public enum RadioState: String, Sendable, Equatable {
    case on, off
}

/// The SIM card: whether it can be used, and its identities.
public struct SIMStatus: Sendable, Equatable {
    public var state: SIMState
    public var iccid: String?
    public var imsi: String?
    /// The subscriber's numbers as the SIM stores them (often none).
    public var msisdns: [String]
    /// PIN1 entries left before the SIM asks for its PUK, when the modem says.
    public var pinRetries: Int?
    /// The modem's SIM slots, where it reports them (dual-SIM and eSIM modems); else empty.
    public var slots: [SIMSlot]

    public init(
        state: SIMState, iccid: String? = nil, imsi: String? = nil, msisdns: [String] = [], pinRetries: Int? = nil,
        slots: [SIMSlot] = []
    ) {
        self.state = state
        self.iccid = iccid
        self.imsi = imsi
        self.msisdns = msisdns
        self.pinRetries = pinRetries
        self.slots = slots
    }
}

public enum SIMState: String, Sendable, Equatable, CaseIterable {
    /// No SIM inserted.
    case absent
    /// The active slot holds an eSIM with no enabled profile (MBIM NO_ESIM_PROFILE).
    case esimWithoutProfile = "esim-without-profile"
    /// PIN1 must be entered before the SIM can be used.
    case pinRequired = "pin-required"
    /// PIN1 is blocked: the PUK must be entered.
    case pukRequired = "puk-required"
    /// The SIM is still initialising (or is not activated).
    case notReady = "not-ready"
    /// The SIM is unusable (bad SIM, SIM failure, permanently blocked).
    case failed
    case ready
}

/// A mobile network: its PLMN as MCC-MNC (`001-01`) and its name.
public struct NetworkOperator: Sendable, Equatable {
    public var id: String?
    public var name: String?

    public init(id: String?, name: String?) {
        self.id = id
        self.name = name
    }

    /// MCC-MNC from the digits of a PLMN (`00101` → `001-01`, `310410` → `310-410`); nil unless
    /// there are 5 or 6 digits.
    public static func plmnID(_ digits: String) -> String? {
        guard digits.count == 5 || digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return nil
        }
        return "\(digits.prefix(3))-\(digits.dropFirst(3))"
    }

    /// MCC-MNC from numbers, the MNC with 3 digits when `threeDigitMNC` or above 99.
    public static func plmnID(mcc: Int, mnc: Int, threeDigitMNC: Bool) -> String {
        func padded(_ number: Int, _ width: Int) -> String {
            let digits = String(number)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(mcc, 3))-\(padded(mnc, threeDigitMNC || mnc > 99 ? 3 : 2))"
    }
}

/// Where the modem stands with the mobile network.
public struct Registration: Sendable, Equatable {
    public var state: RegistrationState
    /// The serving network, while registered.
    public var servingOperator: NetworkOperator?
    public var accessTechnology: AccessTechnology?
    /// Why the network refused registration, when it said (`plmn-not-allowed`).
    public var networkError: String?

    public init(
        state: RegistrationState, servingOperator: NetworkOperator? = nil, accessTechnology: AccessTechnology? = nil,
        networkError: String? = nil
    ) {
        self.state = state
        self.servingOperator = servingOperator
        self.accessTechnology = accessTechnology
        self.networkError = networkError
    }

    /// Registered on a network, home or roaming.
    public var isRegistered: Bool { state == .home || state == .roaming }
}

public enum RegistrationState: String, Sendable, Equatable, CaseIterable {
    case home, roaming, searching, denied
    /// Not registered and not searching (radio off, no usable SIM, deregistered).
    case notRegistered = "not-registered"
    case unknown
}

/// The radio access technology in use (the most capable one the modem reports).
public enum AccessTechnology: String, Sendable, Equatable, CaseIterable {
    case gsm, gprs, edge, umts, hspa, lte
    case nr5g = "5g-nr"
    case cdma
    case other
}

/// Received signal; the LTE values where the modem reports them.
public struct Signal: Sendable, Equatable {
    public var rssiDbm: Int?
    public var rsrpDbm: Int?
    public var rsrqDb: Int?
    public var snrDb: Double?

    public init(rssiDbm: Int? = nil, rsrpDbm: Int? = nil, rsrqDb: Int? = nil, snrDb: Double? = nil) {
        self.rssiDbm = rssiDbm
        self.rsrpDbm = rsrpDbm
        self.rsrqDb = rsrqDb
        self.snrDb = snrDb
    }
}

public enum PacketServiceState: String, Sendable, Equatable, CaseIterable {
    case attached, attaching, detached, detaching, unknown
}

/// The modem's data bearer (its default session / packet data call) as the modem reports it.
public struct BearerStatus: Sendable, Equatable {
    public var state: BearerState
    public var apn: String?
    public var ipv4Address: String?
    public var prefixLength: Int?
    /// The IPv4 gateway.
    public var gateway: String?
    /// DNS servers of both families, IPv4 first.
    public var dnsServers: [String]
    public var mtu: Int?
    /// The bearer's IPv6 address, its on-link prefix length and the IPv6 gateway.
    public var ipv6Address: String?
    public var ipv6PrefixLength: Int?
    public var ipv6Gateway: String?
    /// The net device the modem's manager says a connected bearer carries data on
    /// (ModemManager's bearer `Interface`); nil when it says none (the modem's master).
    public var dataInterface: String?

    public init(
        state: BearerState, apn: String? = nil, ipv4Address: String? = nil, prefixLength: Int? = nil,
        gateway: String? = nil, dnsServers: [String] = [], mtu: Int? = nil,
        ipv6Address: String? = nil, ipv6PrefixLength: Int? = nil, ipv6Gateway: String? = nil,
        dataInterface: String? = nil
    ) {
        self.state = state
        self.apn = apn
        self.ipv4Address = ipv4Address
        self.prefixLength = prefixLength
        self.gateway = gateway
        self.dnsServers = dnsServers
        self.mtu = mtu
        self.ipv6Address = ipv6Address
        self.ipv6PrefixLength = ipv6PrefixLength
        self.ipv6Gateway = ipv6Gateway
        self.dataInterface = dataInterface
    }

    /// The families the bearer has an address of: nil with none.
    public var grantedIPType: BearerIPType? {
        switch (ipv4Address != nil, ipv6Address != nil) {
        case (true, true): .ipv4v6
        case (true, false): .ipv4
        case (false, true): .ipv6
        case (false, false): nil
        }
    }
}

public enum BearerState: String, Sendable, Equatable, CaseIterable {
    case connected, connecting, disconnected, disconnecting, unknown
}
