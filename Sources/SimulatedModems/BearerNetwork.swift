import CellpathCore
import Synchronization

/// What the network assigns to a connected bearer (IPv4 only for now).
public struct BearerAssignment: Sendable, Equatable {
    public var ipv4Address: String
    public var prefixLength: Int
    public var gateway: String
    public var dnsServers: [String]
    public var mtu: Int

    public init(ipv4Address: String, prefixLength: Int, gateway: String, dnsServers: [String], mtu: Int) {
        self.ipv4Address = ipv4Address
        self.prefixLength = prefixLength
        self.gateway = gateway
        self.dnsServers = dnsServers
        self.mtu = mtu
    }
}

/// The data plane behind a simulated modem: connecting a bearer opens the relay and assigns the
/// address, disconnecting closes it. Implemented by the simulated world; called on the modem's
/// own server thread, so implementations must be thread-safe and should return quickly.
public protocol BearerNetwork: Sendable {
    /// Opens the data plane of modem `modemIndex` and returns its assignment; throws to reject.
    func connect(modemIndex: Int) throws -> BearerAssignment
    /// Closes the data plane of modem `modemIndex` (idempotent).
    func disconnect(modemIndex: Int)
}

/// A deterministic bearer network that opens nothing: every modem gets 100.64.23.(10+index)/32,
/// gateway 100.64.0.1, DNS 100.64.0.53, MTU 1500. Records which modems are connected.
public final class StaticBearerNetwork: BearerNetwork {
    private let connected = Mutex<Set<Int>>([])
    /// When true, `connect` throws (the world could not open the relay).
    private let failing: Bool

    public init(failing: Bool = false) { self.failing = failing }

    public func connect(modemIndex: Int) throws -> BearerAssignment {
        if failing { throw CellpathError(.unavailable, "simulated bearer network: relay unavailable") }
        connected.withLock { _ = $0.insert(modemIndex) }
        return BearerAssignment(ipv4Address: "100.64.23.\(10 + modemIndex)", prefixLength: 32,
                                gateway: "100.64.0.1", dnsServers: ["100.64.0.53"], mtu: 1500)
    }

    public func disconnect(modemIndex: Int) {
        connected.withLock { _ = $0.remove(modemIndex) }
    }

    /// Whether modem `modemIndex` currently holds an open data plane.
    public func isConnected(modemIndex: Int) -> Bool {
        connected.withLock { $0.contains(modemIndex) }
    }
}
