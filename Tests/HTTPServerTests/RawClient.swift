import CShims
import Glibc

/// A TCP connection from inside a test namespace to a server there, for requests that curl
/// would not send (malformed framing, dripped bytes, connections held open).
final class RawClient {
    let fd: Int32

    /// Connects to 127.0.0.1:`port` in namespace `namespace`, from `source` (any 127.0.0.0/8
    /// address), waiting at most `connectSeconds` for a server whose backlog is full.
    init(namespace: String, port: Int, source: String = "127.0.0.1", connectSeconds: Int = 10) throws(RawClientError) {
        var error = [CChar](repeating: 0, count: 256)
        let fd = cshims_socket_in_netns(
            "/run/netns/\(namespace)", AF_INET, Int32(SOCK_STREAM.rawValue), 0, &error, error.count)
        guard fd >= 0 else { throw RawClientError(what: "socket") }
        var timeout = timeval(tv_sec: connectSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var peer = sockaddr_in()
        peer.sin_family = sa_family_t(AF_INET)
        peer.sin_port = UInt16(port).bigEndian
        peer.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        let connected = withUnsafePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard bound == 0, connected == 0 else {
            close(fd)
            throw RawClientError(what: "connect from \(source)")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends `text`; false when the connection no longer takes data.
    @discardableResult
    func send(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            == text.utf8.count
    }

    /// Whether the server has closed the connection (end of stream or reset), without waiting.
    var isClosedByServer: Bool {
        var byte: UInt8 = 0
        while true {
            let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
            if count > 0 { continue }
            return count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
        }
    }

    /// What the server sends until it closes the connection, and whether it did so within
    /// `waitSeconds` of silence (false: still open).
    func receiveUntilClosed(waitSeconds: Int) -> (text: String, closed: Bool) {
        var timeout = timeval(tv_sec: waitSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 { received += buffer.prefix(count); continue }
            let closed = count == 0 || errno == ECONNRESET
            return (String(decoding: received, as: UTF8.self), closed)
        }
    }
}

struct RawClientError: Error {
    let what: String
}
