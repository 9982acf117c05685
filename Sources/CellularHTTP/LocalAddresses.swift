import CellpathCore
import Glibc
import SystemSupport

/// Addresses that name this device, which no packet through the cellular interface can reach.
enum LocalAddresses {
    /// True when `address` (numeric) is loopback, unspecified, or on any of the device's
    /// interfaces (IPv4-mapped IPv6 addresses by their IPv4 address).
    static func contains(_ address: String) -> Bool {
        guard var bytes = IPAddress.ipv4Bytes(address) ?? IPAddress.ipv6Bytes(address) else { return false }
        if bytes.count == 16, bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            bytes = Array(bytes.suffix(4))
        }
        if bytes.count == 4, bytes[0] == 127 || bytes[0] == 0 { return true }
        if bytes.count == 16, bytes.prefix(15).allSatisfy({ $0 == 0 }), bytes[15] <= 1 { return true }
        return all().contains(bytes)
    }

    /// True for `localhost` and names under it (RFC 6761), which name this device; c-ares never
    /// asks a DNS server for them.
    static func isLocalhostName(_ host: String) -> Bool {
        let name = (host.hasSuffix(".") ? String(host.dropLast()) : host).lowercased()
        return name == "localhost" || name.hasSuffix(".localhost")
    }

    /// The raw bytes of every IPv4 and IPv6 address on the device's interfaces.
    private static func all() -> Set<[UInt8]> {
        Set(InterfaceSnapshot.deviceAddresses().compactMap { IPAddress.ipv4Bytes($0) ?? IPAddress.ipv6Bytes($0) })
    }
}

extension CellularPath {
    /// The bearer addresses the chain binds to for `ipType`.
    func bindAddresses(for ipType: IPType) -> (ipv4: String?, ipv6: String?) {
        switch ipType {
        case .ipv4: return (ipv4Address, nil)
        case .ipv6: return (nil, ipv6Address)
        case .any: return (ipv4Address, ipv6Address)
        }
    }

    /// Throws unless the interface exists, is up, has its carrier and still holds every address
    /// used for `ipType`. `inUse`: the path carries a request or lookup now, so an interface that
    /// no longer exists went away under it (a modem that reset or re-enumerated): interfaceDown.
    func verify(for ipType: IPType, hop: Int?, inUse: Bool = false) throws(FetchFailure) {
        let (v4, v6) = bindAddresses(for: ipType)
        if v4 == nil && v6 == nil {
            throw FetchFailure(
                .noAddress,
                "the cellular path on \(interfaceName) has no \(ipType == .ipv6 ? "IPv6" : ipType == .ipv4 ? "IPv4" : "IP") address",
                hint: "connect the bearer first", hop: hop)
        }
        let state = InterfaceSnapshot.read(interfaceName)
        guard state.exists || !inUse else {
            throw FetchFailure(
                .interfaceDown, "interface \(interfaceName) went away (the modem reset or re-enumerated)",
                hint: "run it again once the modem is back", hop: hop)
        }
        guard state.exists else {
            throw FetchFailure(
                .noSuchInterface, "interface \(interfaceName) does not exist", hint: "is the modem connected?", hop: hop
            )
        }
        guard state.isUp else { throw FetchFailure(.interfaceDown, "interface \(interfaceName) is down", hop: hop) }
        guard state.hasCarrier else {
            throw FetchFailure(
                .interfaceDown, "interface \(interfaceName) has lost its carrier",
                hint: "the network dropped the bearer", hop: hop)
        }
        for address in [v4, v6].compactMap({ $0 }) where !state.addresses.contains(address) {
            throw FetchFailure(
                .addressGone, "the bearer address \(address) is no longer on \(interfaceName)",
                hint: "the bearer was disconnected or re-addressed", hop: hop)
        }
    }
}
