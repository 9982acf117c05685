import CellpathCore
import Glibc
import SystemSupport

/// Creates a TCP socket bound to numeric `address`:`port` and listening.
func listeningSocket(address: String, port: Int) throws -> Int32 {
    var storage = sockaddr_storage()
    let length: socklen_t
    let family: Int32
    if let v4 = ipv4(address, port: port) {
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v4, as: sockaddr_in.self) }
        length = socklen_t(MemoryLayout<sockaddr_in>.size)
        family = AF_INET
    } else if let v6 = ipv6(address, port: port) {
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v6, as: sockaddr_in6.self) }
        length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        family = AF_INET6
    } else {
        throw CellpathError(.dataError, "'\(address)' is not a numeric IPv4 or IPv6 address")
    }
    let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw socketError("create a socket for \(address)") }
    var on: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    let bound = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    // A backlog as deep as the kernel allows (net.core.somaxconn caps it): a burst of connections
    // waits there while a thread starts for each, rather than having its handshakes dropped.
    guard bound == 0, listen(fd, SOMAXCONN) == 0 else {
        let error = socketError("listen on \(address) port \(port)")
        close(fd)
        throw error
    }
    return fd
}

/// The local port of a bound socket, or nil when `fd` is not one.
func boundPort(of fd: Int32) -> Int? {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let rc = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard rc == 0 else { return nil }
    return withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddressText($0).1 }
    }
}

/// The numeric address and port of an IPv4 or IPv6 socket address.
func socketAddressText(_ address: UnsafePointer<sockaddr>) -> (String, Int) {
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
        return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
            var addr = v4.pointee.sin_addr
            inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
            return (string(text), Int(UInt16(bigEndian: v4.pointee.sin_port)))
        }
    case AF_INET6:
        return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
            var addr = v6.pointee.sin6_addr
            inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count))
            return (string(text), Int(UInt16(bigEndian: v6.pointee.sin6_port)))
        }
    default:
        return ("", 0)
    }
}

private func string(_ chars: [CChar]) -> String {
    String(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

private func ipv4(_ address: String, port: Int) -> sockaddr_in? {
    var result = sockaddr_in()
    guard inet_pton(AF_INET, address, &result.sin_addr) == 1 else { return nil }
    result.sin_family = sa_family_t(AF_INET)
    result.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
    return result
}

private func ipv6(_ address: String, port: Int) -> sockaddr_in6? {
    var result = sockaddr_in6()
    guard inet_pton(AF_INET6, address, &result.sin6_addr) == 1 else { return nil }
    result.sin6_family = sa_family_t(AF_INET6)
    result.sin6_port = UInt16(truncatingIfNeeded: port).bigEndian
    return result
}

private func socketError(_ operation: String) -> CellpathError {
    CellpathError(SystemError("cannot \(operation)"))
}

/// Reads a whole text file.
func readTextFile(_ path: String, what: String) throws -> String {
    do {
        return String(decoding: try FileSystem.read(path), as: UTF8.self)
    } catch {
        throw CellpathError(.configuration, "cannot read the \(what) '\(path)': \(error.reason)")
    }
}
