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
            ipv4: ipType.carriesIPv4
                ? FamilyAssignment(
                    address: plan.ipv4Address(n), prefixLength: 32,
                    gateway: plan.ipv4Gateway, dnsServers: [plan.ipv4DNS]) : nil,
            ipv6: ipType.carriesIPv6
                ? FamilyAssignment(
                    address: plan.ipv6Address(n), prefixLength: plan.ipv6PrefixLength,
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
    /// Routes modem `modemIndex`'s bearer packets as its firmware and kernel settings make them
    /// flow (QMI data format, `qmi/raw_ip`, QMAP mux links). Until called: `.master`.
    func route(modemIndex: Int, through path: BearerDataPath)
    /// qmi_wwan `add_mux`: creates the multiplexed net device of `muxID` over modem `modemIndex`'s
    /// net device and returns its name (`qmimuxN`, the lowest N free in the device's namespace).
    func addMuxLink(modemIndex: Int, muxID: UInt8) throws -> String
    /// qmi_wwan `del_mux`: removes the multiplexed net device `name` (idempotent).
    func removeMuxLink(modemIndex: Int, name: String)
    /// Whether modem `modemIndex`'s net device is administratively up (IFF_UP).
    func isInterfaceUp(modemIndex: Int) -> Bool
}

/// Where a connected bearer's packets flow in the device's namespace.
public enum BearerDataPath: Sendable, Equatable {
    /// Through the modem's own net device (`wwanN`).
    case master
    /// Through the multiplexed net device of that name (qmi_wwan's `qmimuxN`); packets on the
    /// master are dropped (they carry no QMAP header).
    case muxLink(String)
    /// Nowhere: every packet is dropped and counted under `reason`: `linkLayerMismatch` (the
    /// firmware's link-layer protocol differs from `qmi/raw_ip`) or `noMuxLink` (QMAP is on and the
    /// session's mux id has no `qmimux` device).
    case blocked(reason: String)
}

extension BearerNetwork {
    public func route(modemIndex: Int, through path: BearerDataPath) {}
    public func addMuxLink(modemIndex: Int, muxID: UInt8) throws -> String {
        throw CellpathError(.unavailable, "this bearer network has no multiplexed links")
    }
    public func removeMuxLink(modemIndex: Int, name: String) {}
    public func isInterfaceUp(modemIndex: Int) -> Bool { false }
}

/// A deterministic bearer network that opens nothing: every modem gets the carrier's
/// assignment (`BearerAssignment.carrier`). Records which modems are connected, with which families.
public final class StaticBearerNetwork: BearerNetwork {
    private let connected = Mutex<[Int: BearerIPType]>([:])
    /// When true, `connect` throws (the world could not open the relay).
    private let failing: Bool
    private let paths = Mutex<[Int: BearerDataPath]>([:])
    private let muxLinks = Mutex<[String]>([])
    private let upInterfaces = Mutex<Set<Int>>([])

    public init(failing: Bool = false) { self.failing = failing }

    public func route(modemIndex: Int, through path: BearerDataPath) {
        paths.withLock { $0[modemIndex] = path }
    }

    /// Where modem `modemIndex`'s bearer packets flow, as its modem last routed them.
    public func dataPath(modemIndex: Int) -> BearerDataPath {
        paths.withLock { $0[modemIndex] ?? .master }
    }

    public func addMuxLink(modemIndex: Int, muxID: UInt8) throws -> String {
        muxLinks.withLock { links in
            let name = (0...).lazy.map { "qmimux\($0)" }.first { !links.contains($0) }!
            links.append(name)
            return name
        }
    }

    public func removeMuxLink(modemIndex: Int, name: String) {
        muxLinks.withLock { $0.removeAll { $0 == name } }
    }

    /// The multiplexed links that exist, by name.
    public var muxLinkNames: [String] { muxLinks.withLock { $0 } }

    /// Sets whether modem `modemIndex`'s net device counts as up (as `ip link set up` would).
    public func setInterfaceUp(_ up: Bool, modemIndex: Int) {
        upInterfaces.withLock { if up { $0.insert(modemIndex) } else { $0.remove(modemIndex) } }
    }

    public func isInterfaceUp(modemIndex: Int) -> Bool { upInterfaces.withLock { $0.contains(modemIndex) } }

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
