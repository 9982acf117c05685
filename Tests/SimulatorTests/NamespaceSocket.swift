import CShims
import CellpathCore
import Glibc
import Simulator
import TestSupport

/// A UDP socket living in a test world's namespace (created there by the C helper).
final class NamespaceSocket {
    let fd: Int32

    init(namespace: String) throws {
        var error = [CChar](repeating: 0, count: 256)
        fd = cshims_socket_in_netns(
            "/run/netns/\(namespace)", AF_INET, Int32(SOCK_DGRAM.rawValue), 0, &error, error.count)
        if fd < 0 { throw CellpathError(.unavailable, "socket in \(namespace): \(cText(error))") }
    }

    deinit { close(fd) }

    func bind(_ address: String, port: UInt16 = 0) throws {
        var sin = Self.address(address, port)
        let rc = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc != 0 { throw CellpathError(.unavailable, "bind \(address):\(port): \(String(cString: strerror(errno)))") }
    }

    func bindToDevice(_ name: String) throws {
        let rc = name.withCString { setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(strlen($0))) }
        if rc != 0 { throw CellpathError(.unavailable, "SO_BINDTODEVICE \(name): \(String(cString: strerror(errno)))") }
    }

    /// The bound port.
    var port: UInt16 {
        var sin = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: sin.sin_port)
    }

    /// Sends `bytes`; returns false (with errno) when the kernel refuses.
    @discardableResult
    func send(_ bytes: [UInt8], to address: String, port: UInt16) -> Bool {
        var sin = Self.address(address, port)
        let n = withUnsafePointer(to: &sin) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes {
                    sendto(fd, $0.baseAddress, $0.count, 0, sa, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        return n == bytes.count
    }

    /// The next datagram and its source, or nil after `timeoutMs`.
    func receive(timeoutMs: Int32) -> (bytes: [UInt8], address: String, port: UInt16)? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, timeoutMs) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var sin = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = withUnsafeMutablePointer(to: &sin) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buffer, buffer.count, 0, $0, &length) }
        }
        guard n >= 0 else { return nil }
        var text = [CChar](repeating: 0, count: 32)
        inet_ntop(AF_INET, &sin.sin_addr, &text, 32)
        return (Array(buffer[0 ..< n]), cText(text), UInt16(bigEndian: sin.sin_port))
    }

    private static func address(_ text: String, _ port: UInt16) -> sockaddr_in {
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = port.bigEndian
        inet_pton(AF_INET, text, &sin.sin_addr)
        return sin
    }
}

/// Monotonic milliseconds.
func nowMs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
}

/// A minimal DNS A query for `name`.
func dnsQuery(_ name: String, id: UInt16) -> [UInt8] {
    var packet: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xff), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
    for label in name.split(separator: ".") {
        packet.append(UInt8(label.utf8.count))
        packet.append(contentsOf: label.utf8)
    }
    packet += [0, 0, 1, 0, 1]
    return packet
}

/// The rcode and, when there is exactly one answer of type A, its address.
func dnsAnswer(_ response: [UInt8]) -> (rcode: Int, address: String?) {
    guard response.count >= 12 else { return (-1, nil) }
    let rcode = Int(response[3] & 0x0f)
    let answers = Int(response[6]) << 8 | Int(response[7])
    guard answers == 1, response.count >= 16 else { return (rcode, nil) }
    return (rcode, response.suffix(4).map(String.init).joined(separator: "."))
}

/// A NUL-terminated C buffer as a String.
func cText(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
