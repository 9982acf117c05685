import Glibc
import Synchronization
import SystemSupport

/// The whole-request deadline: a connection must deliver a complete request (headers and body)
/// within `limit` of opening or of its previous answer, however steadily it sends, or it is shut
/// down. libmicrohttpd's own timeout only closes connections that go quiet. While a request is
/// being answered its connection has no deadline. Safe to use from any thread.
final class RequestDeadlines: Sendable {
    private struct Entry {
        let fd: Int32
        /// Nil while the request is being answered.
        var deadline: ContinuousClock.Instant?
    }

    let limit: Duration
    /// Open connections by their `MHD_Connection` address.
    private let entries = Mutex<[UInt: Entry]>([:])
    private let stopped = WaitableValue(false)
    private let watcher = Mutex<pthread_t?>(nil)

    /// Starts the thread that shuts down the connections past their deadline.
    init(limit: Duration) throws(SystemError) {
        self.limit = limit
        let thread = try Threads.start { [self] in watch() }
        watcher.withLock { $0 = thread }
    }

    /// A connection was accepted on `fd`.
    func opened(_ connection: OpaquePointer, fd: Int32) {
        entries.withLock { $0[UInt(bitPattern: connection)] = Entry(fd: fd, deadline: .now + limit) }
    }

    /// The connection's request arrived whole: no deadline while it is answered.
    func requestArrived(_ connection: OpaquePointer) {
        entries.withLock { $0[UInt(bitPattern: connection)]?.deadline = nil }
    }

    /// The connection's request ended: the next one must arrive within `limit`.
    func requestEnded(_ connection: OpaquePointer) {
        entries.withLock { $0[UInt(bitPattern: connection)]?.deadline = .now + limit }
    }

    /// The connection is closing. libmicrohttpd calls this before it closes the descriptor, so
    /// the watcher never shuts down a descriptor that was reused.
    func closed(_ connection: OpaquePointer) {
        _ = entries.withLock { $0.removeValue(forKey: UInt(bitPattern: connection)) }
    }

    /// Stops the watcher thread and waits for it. Idempotent.
    func stop() {
        stopped.update { $0 = true }
        if let thread = watcher.withLock({ current -> pthread_t? in
            defer { current = nil }
            return current
        }) {
            Threads.join(thread)
        }
    }

    private func watch() {
        let tick = min(limit / 4, .milliseconds(250))
        while !stopped.wait(until: { $0 }, timeout: tick) {
            let now = ContinuousClock.now
            entries.withLock { entries in
                for (key, entry) in entries {
                    guard let deadline = entry.deadline, deadline <= now else { continue }
                    // libmicrohttpd then reads the end of the stream and closes the connection itself.
                    shutdown(entry.fd, Int32(SHUT_RDWR))
                    entries[key]?.deadline = nil
                }
            }
        }
    }
}
