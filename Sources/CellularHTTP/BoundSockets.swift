import Glibc
import Synchronization
import SystemSupport

/// The sockets bound to a cellular path that are still open, process-wide, so that an
/// immediate exit (the second Ctrl-C, `EmergencyExit`) can still close them safely: each gets
/// `SO_LINGER` 0, so the kernel resets the connection through the still-bound socket (the
/// bearer) when the process exits, instead of answering the peer's late segments from a closed
/// socket through the main routing table (Wi-Fi). Any thread.
enum BoundSockets {
    private static let open = Mutex<Set<Int32>>([])
    private static let hookRegistered = Mutex(false)

    /// Records `fd` as bound (from the sockopt callback, once the bind succeeded).
    static func add(_ fd: Int32) {
        hookRegistered.withLock { registered in
            if !registered { EmergencyExit.register { BoundSockets.resetOnExit() } }
            registered = true
        }
        _ = open.withLock { $0.insert(fd) }
    }

    /// Forgets `fd`; call before closing it.
    static func remove(_ fd: Int32) {
        _ = open.withLock { $0.remove(fd) }
    }

    /// Sets `SO_LINGER` 0 on every recorded socket: closing them (at exit) resets each
    /// connection through its bound device. Quick and non-blocking.
    static func resetOnExit() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        for fd in open.withLock({ $0 }) {
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
    }
}
