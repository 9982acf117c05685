import CellpathCore
import SystemSupport

/// A cellular path read from an interface's current addresses (`--interface NAME --dns …`):
/// the bearer was brought up by someone else, so there is nothing to release.
public struct InterfacePathProvider: CellularPathProvider {
    public var interface: String
    public var dnsServers: [String]
    /// Operator of the serving network as MCC-MNC, when the caller knows it.
    public var operatorID: String?

    public init(interface: String, dnsServers: [String], operatorID: String? = nil) {
        self.interface = interface
        self.dnsServers = dnsServers
        self.operatorID = operatorID
    }

    /// Reads the interface's IPv4 and global IPv6 address; throws `usage` for a DNS server that
    /// is not an IP address, `unavailable` when the interface has no address.
    public func cellularPath() async throws(CellpathError) -> CellularPath {
        if let bad = dnsServers.first(where: { !IPAddress.isNumeric($0) }) {
            throw CellpathError(
                .usage, "invalid DNS server '\(bad)': expected an IPv4 or IPv6 address",
                hint: "give the bearer's DNS servers with --dns")
        }
        let state = InterfaceSnapshot.read(interface)
        guard state.exists else {
            throw CellpathError(.unavailable, "interface \(interface) does not exist", hint: "is the modem connected?")
        }
        let v4 = state.addresses.first { $0.contains(".") }
        let v6 = state.addresses.first { $0.contains(":") && !$0.lowercased().hasPrefix("fe80") }
        guard v4 != nil || v6 != nil else {
            throw CellpathError(.unavailable, "interface \(interface) has no address", hint: "connect the bearer first")
        }
        return CellularPath(
            interfaceName: interface, ipv4Address: v4, ipv6Address: v6,
            dnsServers: dnsServers, operatorID: operatorID)
    }

    public func release() async {}
}
