import Glibc

/// A numeric IPv4 or IPv6 address as bytes (an IPv4 address in IPv6 form is the IPv4 one), for
/// comparing a `Host` with the listen address however either is written.
struct IPLiteral: Equatable {
    let bytes: [UInt8]

    /// Nil when `text` is no numeric address.
    init?(_ text: String) {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            let all = withUnsafeBytes(of: v6) { Array($0) }
            bytes =
                all.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) ? Array(all.suffix(4)) : all
        } else {
            return nil
        }
    }

    /// 127.0.0.0/8 or ::1.
    var isLoopback: Bool { bytes.count == 4 ? bytes[0] == 127 : bytes == Array(repeating: 0, count: 15) + [1] }

    /// 0.0.0.0 or :: (every address of the host).
    var isUnspecified: Bool { bytes.allSatisfy { $0 == 0 } }
}
