import Glibc
import SystemSupport

/// Counts the clients holding a pty slave open, so that a client that goes away takes its
/// pending responses and half-sent frames with it. Opens and closes arrive as inotify events on
/// the slave's device node; inotify merges an event into an identical one still unread (two opens
/// in a row, as qmi-proxy makes when two clients open one port at once, read as one), so after a
/// close the count is taken again from the descriptors /proc shows, the simulator's own one
/// (`ownDescriptor`) left out, at a moment no event is left unread for, and followed back
/// through the events read with it. Until the first event arrives the count is not trusted
/// (`isReliable` is false). Confined to the modem's server thread.
final class ClientWatch {
    /// The inotify descriptor to poll, or -1 when watching is unavailable.
    let fd: Int32
    private let path: String
    private let ownDescriptor: Int32
    private(set) var clients = 0
    private(set) var isReliable = false

    /// Watches `path`, whose descriptor `ownDescriptor` in this process is the simulator's.
    init(path: String, ownDescriptor: Int32) {
        self.path = path
        self.ownDescriptor = ownDescriptor
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

    /// Reads the pending events; returns true when the last client closed the port since the
    /// last call (even if another has opened it since).
    func drain() -> Bool {
        var events = pendingEvents()
        guard !events.isEmpty else { return false }
        isReliable = true
        guard events.contains(.closed) else {
            clients = counted(events)
            return false
        }
        // Back from the clients there are now through the events: how many there were after each.
        // The count and the events must tell of the same moment: a client that opened while /proc
        // was read is in the count, its event not yet read. An open's event comes before its
        // descriptor shows, so /proc is read again until no event came in meanwhile.
        beforeCount?()
        var (found, complete) = openedByClients()
        for _ in 0 ..< 8 {
            let later = pendingEvents()
            guard !later.isEmpty else { break }
            events += later
            (found, complete) = openedByClients()
        }
        let counted = counted(events)
        clients = complete ? found : max(found, counted)
        var after = clients, lastLeft = false
        for event in events.reversed() {
            if event == .closed {
                lastLeft = lastLeft || after == 0
                after += 1
            } else {
                after = max(0, after - 1)
            }
        }
        return lastLeft
    }

    /// Called after a close was read, before the count from /proc: tests open the port there, as
    /// a client may meanwhile.
    var beforeCount: (() -> Void)?

    private enum Event { case opened, closed }

    /// The count after `events`, in order, as they tell it (too few when opens were merged).
    private func counted(_ events: [Event]) -> Int {
        events.reduce(clients) { count, event in event == .opened ? count + 1 : max(0, count - 1) }
    }

    /// The open and close events waiting, oldest first.
    private func pendingEvents() -> [Event] {
        guard fd >= 0 else { return [] }
        var events: [Event] = []
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
                if mask & UInt32(IN_OPEN) != 0 { events.append(.opened) }
                if mask & UInt32(IN_CLOSE_WRITE | IN_CLOSE_NOWRITE) != 0 { events.append(.closed) }
                offset += header + Int(nameLength)
            }
        }
        return events
    }

    /// How many descriptors of the port clients hold, from /proc, and whether every process's
    /// descriptors could be read (not other users' when the simulator does not run as root).
    private func openedByClients() -> (found: Int, complete: Bool) {
        let (descriptors, unreadable) = OpenDescriptors.of(path)
        let own = getpid()
        return (descriptors.filter { $0.pid != own || $0.fd != ownDescriptor }.count, unreadable == 0)
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
    }
}
