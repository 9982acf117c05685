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
}
