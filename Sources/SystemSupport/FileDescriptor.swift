import CShims
import Glibc
import Synchronization

/// An open file descriptor that closes itself when the last reference goes away (or on
/// `close()`, once). Any thread.
public final class FileDescriptor: Sendable {
    private let value: Atomic<Int32>

    /// Takes ownership of `raw`.
    public init(owning raw: Int32) { value = Atomic(raw) }

    /// The descriptor, or -1 once closed or released.
    public var rawValue: Int32 { value.load(ordering: .acquiring) }

    /// Closes the descriptor; later calls do nothing.
    public func close() {
        let raw = value.exchange(-1, ordering: .acquiringAndReleasing)
        if raw >= 0 { Glibc.close(raw) }
    }

    /// Gives up ownership: returns the descriptor, which the caller must close.
    public func release() -> Int32 { value.exchange(-1, ordering: .acquiringAndReleasing) }

    deinit { close() }

    /// `open(2)` with `O_CLOEXEC` added.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(SystemError) -> FileDescriptor
    {
        let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SystemError("open \(path)") }
        return FileDescriptor(owning: fd)
    }

    /// A pipe whose both ends are close-on-exec (atomically, `pipe2`), optionally non-blocking.
    public static func pipe(
        nonBlocking: Bool = false
    ) throws(SystemError) -> (read: FileDescriptor, write: FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard cshims_pipe2(&fds, O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0)) == 0 else { throw SystemError("pipe2") }
        return (FileDescriptor(owning: fds[0]), FileDescriptor(owning: fds[1]))
    }

    /// Accepts a connection on the listening socket `listener` with `SOCK_CLOEXEC` set
    /// atomically (`accept4`); nil when none is pending on a non-blocking socket.
    public static func accept(_ listener: Int32) throws(SystemError) -> FileDescriptor? {
        while true {
            let fd = cshims_accept4(listener, Int32(SOCK_CLOEXEC.rawValue))
            if fd >= 0 { return FileDescriptor(owning: fd) }
            if errno == EINTR || errno == ECONNABORTED { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw SystemError("accept4")
        }
    }
}
