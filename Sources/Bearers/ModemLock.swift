import CellpathCore
import Glibc
import SystemSupport

/// The lock that serialises every change of one modem's bearer state between cellpath
/// processes (a timer's check and a person's `bearer up` at the same moment): an exclusive
/// `flock` on `bearer-<port>.lock` beside the modem's bearer record. The holder writes its pid
/// and what it is doing into the file, so that a command that waits can name it. The kernel
/// releases the lock when the holder exits, however it exits. Held only while the bearer's
/// state changes (bring-up, the record's users, teardown), never while a check runs.
public final class ModemLock: Sendable {
    private let descriptor: FileDescriptor

    private init(descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// How often a waiting command tries the lock again.
    static let retryInterval = Duration.milliseconds(50)

    /// Takes the lock of `controlPort`'s bearer for `purpose` ("bearer up"), waiting for
    /// another holder up to `wait` (zero: not at all). `waiting` is called once, with the
    /// holder's description, when the lock is taken. Throws `.temporary` (75) naming the holder
    /// when the wait ends, `.cancelled` when the task is.
    public static func acquire(_ controlPort: String, in records: BearerRecords, purpose: String, wait: Duration,
                               waiting: (String) -> Void = { _ in }) async throws(CellpathError) -> ModemLock {
        try records.prepareDirectory()
        let path = records.lockPath(controlPort)
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CellpathError(SystemError("open \(path)"), kind: .cannotCreate,
                                hint: "bearer records and locks live in \(records.directory)")
        }
        let descriptor = FileDescriptor(owning: fd)
        try records.checkOwnership(of: fd, path)
        let deadline = ContinuousClock.now + wait
        var told = false
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw CellpathError(SystemError("lock \(path)"), kind: .unavailable)
            }
            let holder = describeHolder(fd)
            guard ContinuousClock.now < deadline else {
                throw CellpathError(.temporary, "modem's bearer is busy: \(holder) is changing it",
                                    hint: wait == .zero ? "retry when it is done, or wait for it with --wait SECONDS"
                                                        : "retry when it is done, or wait longer with --wait SECONDS")
            }
            if !told {
                waiting(holder)
                told = true
            }
            do {
                try await Task.sleep(for: retryInterval)
            } catch {
                throw CellpathError(.cancelled, "cancelled while waiting for \(holder)")
            }
        }
        let lock = ModemLock(descriptor: descriptor)
        lock.describe(purpose)
        return lock
    }

    /// Releases the lock (closing the file releases it too).
    public func release() {
        descriptor.close()
    }

    /// Writes `cellpath process PID (PURPOSE)` into the lock file for waiting commands.
    private func describe(_ purpose: String) {
        let fd = descriptor.rawValue
        let text = "cellpath process \(getpid()) (\(purpose))"
        _ = ftruncate(fd, 0)
        _ = Array(text.utf8).withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// What the holder wrote of itself, made safe to print.
    private static func describeHolder(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 200)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        let text = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""
        let safe = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7f }.map(Character.init))
        return safe.hasPrefix("cellpath process ") ? safe : "another cellpath process"
    }
}
