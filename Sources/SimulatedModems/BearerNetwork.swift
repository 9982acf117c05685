import CellpathCore
import SimulatorScenario
import Synchronization

/// The settings of one address family of a connected bearer.
public struct FamilyAssignment: Sendable, Equatable {
    /// The bearer's own address (numeric, no prefix).
    public var address: String
    /// On-link prefix length: 32 for the IPv4 address, 64 for the IPv6 prefix.
    public var prefixLength: Int
    public var gateway: String
    /// DNS servers of this family.
    public var dnsServers: [String]

    public init(address: String, prefixLength: Int, gateway: String, dnsServers: [String]) {
        self.address = address
        self.prefixLength = prefixLength
        self.gateway = gateway
        self.dnsServers = dnsServers
    }
}

/// What the network assigns to a connected bearer: the settings of each granted family.
public struct BearerAssignment: Sendable, Equatable {
    public var ipv4: FamilyAssignment?
    public var ipv6: FamilyAssignment?
    public var mtu: Int

    public init(ipv4: FamilyAssignment?, ipv6: FamilyAssignment?, mtu: Int) {
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.mtu = mtu
    }

    /// The families assigned (nil when none is, which no connected bearer has).
    public var ipType: BearerIPType? { BearerIPType(carryingIPv4: ipv4 != nil, ipv6: ipv6 != nil) }

    /// What the simulated carrier assigns modem `modemIndex` for `ipType` (docs/simulator.md
    /// "Addresses"): IPv4 100.64.23.(10+n)/32, gateway 100.64.0.1, DNS 100.64.0.53; IPv6
    /// 2001:db8:64:(0x10+n)::2 in its /64, gateway …::1, DNS 2001:db8:64::53; MTU 1500.
    public static func carrier(modemIndex n: Int, ipType: BearerIPType) -> BearerAssignment {
        let plan = BearerAddressPlan.self
        return BearerAssignment(
            ipv4: ipType.carriesIPv4 ? FamilyAssignment(address: plan.ipv4Address(n), prefixLength: 32,
                                                        gateway: plan.ipv4Gateway, dnsServers: [plan.ipv4DNS]) : nil,
            ipv6: ipType.carriesIPv6 ? FamilyAssignment(address: plan.ipv6Address(n), prefixLength: plan.ipv6PrefixLength,
                                                        gateway: plan.ipv6Gateway(n), dnsServers: [plan.ipv6DNS]) : nil,
            mtu: 1500)
    }
}

/// The simulated carrier's bearer addresses (documentation ranges), per modem index n.
public enum BearerAddressPlan {
    /// 100.64.23.(10+n).
    public static func ipv4Address(_ n: Int) -> String { "100.64.23.\(10 + n)" }
    /// The carrier's identification endpoint, the IPv4 gateway of every bearer.
    public static let ipv4Gateway = "100.64.0.1"
    /// The carrier DNS.
    public static let ipv4DNS = "100.64.0.53"
    /// The /64 of modem n: 2001:db8:64:(0x10+n):: (modem 0: 2001:db8:64:10::).
    public static func ipv6Prefix(_ n: Int) -> String { "2001:db8:64:\(String(0x10 + n, radix: 16))::" }
    public static let ipv6PrefixLength = 64
    /// The address the modem reports in its /64: …::2.
    public static func ipv6Address(_ n: Int) -> String { ipv6Prefix(n) + "2" }
    /// The carrier's end of modem n's /64: …::1.
    public static func ipv6Gateway(_ n: Int) -> String { ipv6Prefix(n) + "1" }
    /// The carrier DNS over IPv6 (DNS64 in a NAT64 world).
    public static let ipv6DNS = "2001:db8:64::53"
}

/// The data plane behind a simulated modem: connecting a bearer opens the relay and assigns the
/// addresses, disconnecting closes it. Implemented by the simulated world; called on the modem's
/// own server thread, so implementations must be thread-safe and should return quickly.
public protocol BearerNetwork: Sendable {
    /// Opens the data plane of modem `modemIndex` for exactly the families of `ipType` (the
    /// granted ones; a second call widens or narrows it) and returns their assignment; throws to reject.
    func connect(modemIndex: Int, ipType: BearerIPType) throws -> BearerAssignment
    /// Closes the data plane of modem `modemIndex` (idempotent).
    func disconnect(modemIndex: Int)
}

/// A deterministic bearer network that opens nothing: every modem gets the carrier's
/// assignment (`BearerAssignment.carrier`). Records which modems are connected, with which families.
public final class StaticBearerNetwork: BearerNetwork {
    private let connected = Mutex<[Int: BearerIPType]>([:])
    /// When true, `connect` throws (the world could not open the relay).
    private let failing: Bool

    public init(failing: Bool = false) { self.failing = failing }

    public func connect(modemIndex: Int, ipType: BearerIPType) throws -> BearerAssignment {
        if failing { throw CellpathError(.unavailable, "simulated bearer network: relay unavailable") }
        connected.withLock { $0[modemIndex] = ipType }
        return .carrier(modemIndex: modemIndex, ipType: ipType)
    }

    public func disconnect(modemIndex: Int) {
        connected.withLock { _ = $0.removeValue(forKey: modemIndex) }
    }

    /// Whether modem `modemIndex` currently holds an open data plane.
    public func isConnected(modemIndex: Int) -> Bool {
        connected.withLock { $0[modemIndex] != nil }
    }

    /// The families modem `modemIndex`'s open data plane carries, or nil when it is closed.
    public func ipType(modemIndex: Int) -> BearerIPType? {
        connected.withLock { $0[modemIndex] }
    }
}
