import CellpathCore
import SystemSupport

/// The IP configuration a modem reports of its bearer, checked before cellpath applies it:
/// an address that is no bearer's (unspecified, loopback, link-local, multicast) or that lies
/// in another interface's network is refused; DNS servers the path cannot use (unspecified,
/// loopback, link-local, multicast, this host's own addresses) are left out, and refused when
/// none is left, or none was reported for the families in use; an MTU too small for the
/// families in use is refused, one above 1500 clamped.
struct BearerIPConfigurationCheck {
    /// The largest MTU cellpath applies: what cellular networks carry.
    static let largestMTU = 1500

    let modemIndex: Int
    /// The bearer's interface: its own addresses never conflict with the bearer's.
    let interface: String
    /// The families the bring-up asked for: only their settings are checked and used.
    let wanted: BearerIPType
    /// Every address of every interface, with its network.
    let networks: [InterfaceNetwork]

    /// `bearer` as cellpath may apply it, or a refusal (`.protocolError`, or `.unavailable`
    /// for an address in another interface's network); `warn` gets what was left out or clamped.
    func checked(_ bearer: BearerStatus, warn: (String) -> Void) throws -> BearerStatus {
        var checked = bearer
        let ipv4 = wanted.includesIPv4 ? bearer.ipv4Address : nil
        let ipv6 = wanted.includesIPv6 ? bearer.ipv6Address : nil
        if let ipv4 { try checkAddress(ipv4, prefixLength: 32, family: "IPv4") }
        if let ipv6 {
            try checkAddress(
                ipv6, prefixLength: bearer.ipv6PrefixLength.flatMap { (1 ... 128).contains($0) ? $0 : nil } ?? 64,
                family: "IPv6")
        }

        let usable = bearer.dnsServers.filter { server in
            guard let problem = dnsProblem(server) else { return true }
            warn("modem \(modemIndex) reports \(server) as a DNS server: left out (\(problem))")
            return false
        }
        let inUse = { (servers: [String]) in servers.filter { $0.contains(":") ? ipv6 != nil : ipv4 != nil } }
        // (A bearer without an address of the families in use is refused by the bring-up.)
        if ipv4 != nil || ipv6 != nil, inUse(usable).isEmpty {
            // None at all: ModemManager drops the 0.0.0.0 that some firmware reports.
            let reported = inUse(bearer.dnsServers)
            let refused =
                reported.isEmpty
                ? bearer.dnsServers.isEmpty
                    ? "none" : "none of its address family (\(bearer.dnsServers.joined(separator: ", ")))"
                : reported.map { "\($0) (\(dnsProblem($0) ?? ""))" }.joined(separator: ", ")
            throw CellpathError(
                .protocolError, "modem \(modemIndex) reports no usable DNS server for its bearer: \(refused)",
                hint:
                    "cellpath resolves names only through the bearer's DNS servers: reconnect the bearer, or check the APN's settings with the operator"
            )
        }
        checked.dnsServers = usable

        if let mtu = bearer.mtu, mtu > 0 {
            let smallest = ipv6 != nil ? 1280 : 576
            if mtu < smallest {
                throw CellpathError(
                    .protocolError,
                    "modem \(modemIndex) reports an MTU of \(mtu) for its bearer: too small for \(ipv6 != nil ? "IPv6" : "IPv4") (at least \(smallest))",
                    hint:
                        "reconnect the bearer; if it persists, the modem's firmware or the APN's settings are at fault")
            }
            if mtu > Self.largestMTU {
                warn("modem \(modemIndex) reports an MTU of \(mtu) for its bearer: clamped to \(Self.largestMTU)")
                checked.mtu = Self.largestMTU
            }
        } else {
            checked.mtu = nil
        }
        return checked
    }

    /// Refuses an address that is no bearer's, or that lies in another interface's network.
    private func checkAddress(_ address: String, prefixLength: Int, family: String) throws {
        guard let bytes = IPAddress.ipv4Bytes(address) ?? IPAddress.ipv6Bytes(address) else {
            throw CellpathError(
                .protocolError,
                "modem \(modemIndex) reports \"\(address)\" as its bearer's \(family) address: not an IP address")
        }
        if let kind = Self.nonBearerKind(bytes) {
            throw CellpathError(
                .protocolError,
                "modem \(modemIndex) reports \(address) as its bearer's \(family) address: \(kind), not a bearer address",
                hint: "reconnect the bearer; if it persists, the modem's firmware or the APN's settings are at fault")
        }
        for network in networks where network.interface != interface {
            guard let other = IPAddress.ipv4Bytes(network.address) ?? IPAddress.ipv6Bytes(network.address),
                other.count == bytes.count,
                Self.samePrefix(bytes, other, bits: min(prefixLength, network.prefixLength))
            else { continue }
            throw CellpathError(
                .unavailable,
                "modem \(modemIndex)'s bearer address \(address) lies in \(network.interface)'s network \(network.address)/\(network.prefixLength)",
                hint:
                    "traffic for that network could not be told apart: move \(network.interface) off it, or use another APN"
            )
        }
    }

    /// Why `server` cannot be the bearer's DNS server, or nil when it can.
    private func dnsProblem(_ server: String) -> String? {
        guard let bytes = IPAddress.ipv4Bytes(server) ?? IPAddress.ipv6Bytes(server) else { return "not an IP address" }
        if let kind = Self.nonBearerKind(bytes) { return kind }
        let own = networks.contains { (IPAddress.ipv4Bytes($0.address) ?? IPAddress.ipv6Bytes($0.address)) == bytes }
        return own ? "an address of this host" : nil
    }

    /// What kind of address `bytes` (4 or 16) is when it cannot be a bearer's or a remote server's.
    static func nonBearerKind(_ bytes: [UInt8]) -> String? {
        if bytes.count == 4 {
            switch bytes[0] {
            case 0: return "unspecified"
            case 127: return "loopback"
            case 169 where bytes[1] == 254: return "link-local"
            case 224 ... 239: return "multicast"
            case 240 ... 255: return "reserved or broadcast"
            default: return nil
            }
        }
        if bytes.allSatisfy({ $0 == 0 }) { return "unspecified" }
        if bytes.dropLast().allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return "loopback" }
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return "link-local" }
        if bytes[0] == 0xFF { return "multicast" }
        if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return "IPv4-mapped" }
        return nil
    }

    /// Whether `a` and `b` agree in their first `bits` bits.
    static func samePrefix(_ a: [UInt8], _ b: [UInt8], bits: Int) -> Bool {
        for index in 0 ..< min(a.count, (bits + 7) / 8) {
            let kept = min(8, bits - index * 8)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
            if a[index] & mask != b[index] & mask { return false }
        }
        return true
    }
}
