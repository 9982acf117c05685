/// The router advertisement a carrier's gateway sends on an IPv6 bearer (3GPP TS 29.061 §11.2.1.3:
/// the bearer's /64 in a prefix information option, autonomous flag set, on-link flag clear),
/// from its link-local address fe80::1 to all nodes (ff02::1). Hosts that take router
/// advertisements form their global address from it (SLAAC, RFC 4862), as after a t7xx connect.
enum RouterAdvertisement {
    static let routerLinkLocal: [UInt8] = [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1]
    static let allNodes: [UInt8] = [0xff, 0x02] + [UInt8](repeating: 0, count: 13) + [1]
    /// Router lifetime (s), and the prefix's valid and preferred lifetimes (s).
    static let routerLifetime: UInt16 = 1800
    static let validLifetime: UInt32 = 86400
    static let preferredLifetime: UInt32 = 14400

    /// The whole IPv6 packet advertising the /64 whose first 8 bytes are `prefix`, with `mtu`.
    static func packet(prefix: [UInt8], mtu: Int) -> [UInt8] {
        var icmp: [UInt8] = [134, 0, 0, 0]  // type, code, checksum (below)
        icmp += [64, 0]  // current hop limit; flags M, O clear
        icmp += bigEndian(routerLifetime)
        icmp += bigEndian(UInt32(0)) + bigEndian(UInt32(0))  // reachable time, retransmission timer
        icmp += [3, 4, 64, 0x40]  // prefix information, 32 bytes, /64, A
        icmp += bigEndian(validLifetime) + bigEndian(preferredLifetime) + bigEndian(UInt32(0))
        icmp += Array(prefix.prefix(8)) + [UInt8](repeating: 0, count: 8)
        icmp += [5, 1, 0, 0] + bigEndian(UInt32(clamping: mtu))  // MTU option
        let sum = checksum(routerLinkLocal + allNodes + bigEndian(UInt32(icmp.count)) + [0, 0, 0, 58] + icmp)
        icmp[2] = UInt8(sum >> 8)
        icmp[3] = UInt8(sum & 0xff)
        var header: [UInt8] = [0x60, 0, 0, 0]
        header += bigEndian(UInt16(icmp.count))
        header += [58, 255]  // next header ICMPv6, hop limit 255
        return header + routerLinkLocal + allNodes + icmp
    }

    /// Whether `packet` is an ICMPv6 router solicitation (type 133) without extension headers.
    static func isRouterSolicitation(_ packet: [UInt8]) -> Bool {
        packet.count >= 48 && packet[0] >> 4 == 6 && packet[6] == 58 && packet[40] == 133
    }

    private static func bigEndian(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xff)] }
    private static func bigEndian(_ v: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }

    /// The Internet checksum (RFC 1071) of `bytes`.
    private static func checksum(_ bytes: [UInt8]) -> UInt16 {
        var sum: UInt32 = 0
        for i in stride(from: 0, to: bytes.count, by: 2) {
            sum += UInt32(bytes[i]) << 8 | (i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0)
        }
        while sum >> 16 != 0 { sum = (sum & 0xffff) + (sum >> 16) }
        return ~UInt16(sum)
    }
}
