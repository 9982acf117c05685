import Glibc

/// Numeric IP address parsing with the C library (`inet_pton`).
public enum IPAddress {
    /// The 4 bytes of a dotted-quad IPv4 address, or nil when `text` is not one.
    public static func ipv4Bytes(_ text: String) -> [UInt8]? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: address.s_addr) { Array($0) }
    }

    /// The 16 bytes of an IPv6 address, or nil when `text` is not one.
    public static func ipv6Bytes(_ text: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: address) { Array($0) }
    }

    /// True when `text` is a numeric IPv4 or IPv6 address.
    public static func isNumeric(_ text: String) -> Bool { ipv4Bytes(text) != nil || ipv6Bytes(text) != nil }

    /// The numeric text of an IPv4 or IPv6 socket address; nil for other families.
    public static func numericHost(_ sa: UnsafePointer<sockaddr>) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let converted: Bool
        switch Int32(sa.pointee.sa_family) {
        case AF_INET:
            converted = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in
                var a = p.pointee.sin_addr
                return inet_ntop(AF_INET, &a, &buffer, socklen_t(buffer.count)) != nil
            }
        case AF_INET6:
            converted = sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                var a = p.pointee.sin6_addr
                return inet_ntop(AF_INET6, &a, &buffer, socklen_t(buffer.count)) != nil
            }
        default:
            converted = false
        }
        return converted
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
    }
}
