import Glibc

/// Counts the clients holding a pty slave open, from inotify open/close events on its device
/// node, so that a client that goes away takes its pending responses and half-sent frames with
/// it. Until the first event arrives the count is not trusted (`isReliable` is false).
/// Confined to the modem's server thread.
final class ClientWatch {
    /// The inotify descriptor to poll, or -1 when watching is unavailable.
    let fd: Int32
    private(set) var clients = 0
    private(set) var isReliable = false

    init(path: String) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if fd >= 0 && inotify_add_watch(fd, path, UInt32(IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE)) < 0 {
            Glibc.close(fd)
            self.fd = -1
        } else {
            self.fd = fd
        }
    }

    /// True when the count is known and nobody has the port open.
    var nobodyListening: Bool { isReliable && clients == 0 }

    /// Reads the pending events; returns true when the last client has just closed the port.
    func drain() -> Bool {
        guard fd >= 0 else { return false }
        var lastLeft = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { break }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= n {
                let (mask, nameLength) = buffer.withUnsafeBytes { raw in
                    (
                        raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
                    )
                }
                if mask & UInt32(IN_OPEN) != 0 {
                    clients += 1
                    isReliable = true
                }
                if mask & UInt32(IN_CLOSE_WRITE | IN_CLOSE_NOWRITE) != 0 {
                    isReliable = true
                    if clients > 0 {
                        clients -= 1
                        if clients == 0 { lastLeft = true }
                    }
                }
                offset += header + Int(nameLength)
            }
        }
        return lastLeft
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
    }
}
