import Glibc
import SimulatorScenario
import SystemSupport

extension BearerAssignment {
    /// The assignment as a modem with `report` answers it: each reported field replaces the
    /// assignment's, in the families the bearer carries (DNS servers each with their family).
    func reported(as report: ReportedIPConfiguration?) -> BearerAssignment {
        guard let report else { return self }
        var reported = self
        if let address = report.ipv4Address { reported.ipv4?.address = address }
        if let address = report.ipv6Address { reported.ipv6?.address = address }
        if let servers = report.dnsServers {
            reported.ipv4?.dnsServers = servers.filter { !$0.contains(":") }
            reported.ipv6?.dnsServers = servers.filter { $0.contains(":") }
        }
        if let mtu = report.mtu { reported.mtu = mtu }
        return reported
    }
}

extension BearerAssignment {
    /// The router's link-local address on a bearer: the source of its router advertisements.
    public static let routerLinkLocalAddress = "fe80::1"

    /// The IPv6 part as t7xx firmware reports it: the interface identifier of the assigned
    /// address under fe80::/64, the router's link-local address as gateway; the host forms the
    /// global address from the router advertisement's prefix (SLAAC).
    func linkLocalIPv6() -> BearerAssignment {
        guard let ipv6 = ipv6, let bytes = IPAddress.ipv6Bytes(ipv6.address) else { return self }
        var reported = self
        let linkLocal = [0xfe, 0x80, 0, 0, 0, 0, 0, 0] + bytes.suffix(8)
        reported.ipv6?.address = Self.ipv6Text(linkLocal)
        reported.ipv6?.prefixLength = 64
        reported.ipv6?.gateway = Self.routerLinkLocalAddress
        return reported
    }

    private static func ipv6Text(_ bytes: [UInt8]) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = inet_ntop(AF_INET6, bytes, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
