import Glibc

/// A process as the kernel knows it: its pid and its start time (clock ticks after boot, field
/// 22 of `/proc/PID/stat`), so that a pid the kernel reused for another process is not taken
/// for the one that was recorded. Any thread.
public struct ProcessIdentity: Sendable, Equatable, Hashable, Codable {
    public var pid: Int32
    public var startTime: UInt64

    public init(pid: Int32, startTime: UInt64) {
        self.pid = pid
        self.startTime = startTime
    }

    /// This process.
    public static var current: ProcessIdentity {
        let pid = getpid()
        return ProcessIdentity(pid: pid, startTime: startTime(of: pid) ?? 0)
    }

    /// True while this very process runs (same pid, same start time).
    public var isAlive: Bool {
        guard pid > 0, let now = Self.startTime(of: pid) else { return false }
        return now == startTime
    }

    /// The start time of `pid`, nil when there is no such process.
    public static func startTime(of pid: Int32) -> UInt64? {
        guard let bytes = try? FileSystem.read("/proc/\(pid)/stat", limit: 4096) else { return nil }
        // The command name (field 2) is in parentheses and may hold spaces: fields count after its last ')'.
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is field 3 (state): field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }
}
