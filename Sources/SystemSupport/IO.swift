import Glibc

/// Whole-buffer reads and writes on raw descriptors, retrying on EINTR and short counts.
/// Blocking; call from a plain thread, not from Swift's cooperative pool in a hot path.
public enum IO {
    /// Writes all of `bytes` to `fd`.
    public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) throws(SystemError) {
        let result: Int32 = Array(bytes).withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return 0
        }
        if result != 0 { throw SystemError("write", code: result) }
    }

    /// Writes all of `text` (UTF-8) to `fd`.
    public static func writeAll(_ fd: Int32, _ text: String) throws(SystemError) {
        try writeAll(fd, Array(text.utf8))
    }

    /// Reads `fd` until end of file (at most `limit` bytes; more is an EFBIG error).
    public static func readAll(_ fd: Int32, limit: Int = 64 << 20) throws(SystemError) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("read")
            }
            if n == 0 { return bytes }
            guard bytes.count + n <= limit else { throw SystemError("read", code: EFBIG) }
            bytes.append(contentsOf: buffer[0 ..< n])
        }
    }

    /// Sends all of `bytes` on the socket `fd` without raising SIGPIPE when the peer is gone.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("send")
            }
            offset += n
        }
    }
}
