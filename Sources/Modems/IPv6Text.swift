import Glibc

/// The 16 bytes of an IPv6 address as the C library prints it (`2001:db8::2`), as both
/// protocols carry it (network byte order).
func ipv6Text(_ bytes: [UInt8]) -> String {
    guard bytes.count == 16 else { return "::" }
    var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    guard inet_ntop(AF_INET6, bytes, &buffer, socklen_t(buffer.count)) != nil else { return "::" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
