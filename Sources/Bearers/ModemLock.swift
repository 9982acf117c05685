import CellpathCore
import Glibc
import ModemDiscovery
import SystemSupport

/// The lock that serialises every change of one modem's bearer state between cellpath
/// processes (a timer's check and a person's `bearer up` at the same moment): an exclusive
/// `flock` on `bearer-<device>.lock` (named by the modem's physical device) beside the modem's bearer record. The holder writes its pid
/// and what it is doing into the file, so that a command that waits can name it, and removes
/// the file as it lets go. The kernel releases the lock when the holder exits, however it
/// exits. Held only while the bearer's
/// state changes (bring-up, the record's users, teardown), never while a check runs.
public final class ModemLock: Sendable {
    private let descriptor: FileDescriptor
    private let path: String

    private init(descriptor: FileDescriptor, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// How often a waiting command tries the lock again.
    static let retryInterval = Duration.milliseconds(50)

    /// Takes the lock of `modem`'s bearer for `purpose` ("bearer up"), waiting for
    /// another holder up to `wait` (zero: not at all). `waiting` is called once, with the
    /// holder's description, when the lock is taken. Throws `.temporary` (75) naming the holder
    /// when the wait ends, `.cancelled` when the task is.
    public static func acquire(
        _ modem: DiscoveredModem, in records: BearerRecords, purpose: String, wait: Duration,
        waiting: (String) -> Void = { _ in }
    ) async throws(CellpathError) -> ModemLock {
        try records.prepareDirectory()
        let path = records.lockPath(for: modem)
        let modemIndex = modem.index
        let deadline = ContinuousClock.now + wait
        var told = false
        while true {
            let fd = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw CellpathError(
                    SystemError("open \(path)"), kind: .cannotCreate,
                    hint: "bearer records and locks live in \(records.directory)")
            }
            let descriptor = FileDescriptor(owning: fd)
            try records.checkOwnership(of: fd, path, modem: modemIndex)
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                // The holder before removed the file as it let go: lock the one at the path now.
                guard isStillAtPath(fd, path) else { continue }
                let lock = ModemLock(descriptor: descriptor, path: path)
                lock.describe(purpose)
                return lock
            }
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw CellpathError(SystemError("lock \(path)"), kind: .unavailable)
            }
            let holder = describeHolder(fd)
            guard ContinuousClock.now < deadline else {
                throw CellpathError(
                    .temporary, "the modem's bearer is busy: \(holder) is changing it",
                    hint: wait == .zero
                        ? "retry when it is done, or wait for it with --wait SECONDS"
                        : "retry when it is done, or wait longer with --wait SECONDS")
            }
            if !told {
                waiting(holder)
                told = true
            }
            descriptor.close()
            do {
                try await Task.sleep(for: retryInterval)
            } catch {
                throw CellpathError(.cancelled, "cancelled while waiting for \(holder)")
            }
        }
    }

    /// Releases the lock, removing its file first: a process waiting on the removed file finds
    /// it gone once it holds it, and starts again with the path's new file.
    public func release() {
        unlink(path)
        descriptor.close()
    }

    /// Whether `fd` is still the file at `path`.
    private static func isStillAtPath(_ fd: Int32, _ path: String) -> Bool {
        var open = stat(), named = stat()
        return fstat(fd, &open) == 0 && lstat(path, &named) == 0 && open.st_dev == named.st_dev
            && open.st_ino == named.st_ino
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
        let text = n > 0 ? String(decoding: buffer[0 ..< n], as: UTF8.self) : ""
        let safe = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7f }.map(Character.init))
        return safe.hasPrefix("cellpath process ") ? safe : "another cellpath process"
    }
}
