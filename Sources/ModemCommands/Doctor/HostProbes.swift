import CShims
import Glibc
import SystemSupport

/// Read-only facts about this machine that `doctor` checks: who holds a device
/// open, the clock. Nothing here changes anything or blocks.
enum HostProbes {
    /// A process holding a file open.
    struct Holder: Sendable, Equatable {
        var pid: Int32
        var name: String
    }

    /// The processes (other than this one) with `path` open, found through /proc/*/fd, and how
    /// many processes' descriptors could not be read (other users' without root).
    static func holders(of path: String) -> (holders: [Holder], unreadable: Int) {
        let (descriptors, unreadable) = OpenDescriptors.of(path)
        let own = getpid()
        var pids: [Int32] = []
        for descriptor in descriptors where descriptor.pid != own && !pids.contains(descriptor.pid) {
            pids.append(descriptor.pid)
        }
        return (pids.map { Holder(pid: $0, name: processName($0) ?? "?") }, unreadable)
    }

    /// The name of process `pid` (its `comm`).
    static func processName(_ pid: Int32) -> String? {
        FileSystem.readText("/proc/\(pid)/comm").map { $0.filter { $0 != "\n" } }
    }

    /// Whether a process named `name` runs (as far as /proc shows).
    static func isRunning(_ name: String) -> Bool {
        (OpenDescriptors.numericEntries("/proc") ?? []).contains { processName($0) == name }
    }

    /// Whether the kernel says the clock is synchronised (adjtimex: not TIME_ERROR), as timedated's
    /// `NTPSynchronized` does; nil when it cannot tell.
    static func clockSynchronised() -> Bool? {
        let state = cshims_clock_synchronised()
        return state < 0 ? nil : state == 1
    }

    /// The current year of the system clock (UTC).
    static func currentYear() -> Int {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return Int(parts.tm_year) + 1900
    }

    /// The name of group `gid`, or its number.
    static func groupName(_ gid: gid_t) -> String {
        guard let group = getgrgid(gid) else { return String(gid) }
        return String(cString: group.pointee.gr_name)
    }

    /// The last component of the link `path` points to (a device's `driver`), nil when it is no link.
    static func linkName(_ path: String) -> String? {
        linkTarget(path)?.split(separator: "/").last.map(String.init)
    }

    /// What the link `path` points to, as written in it; nil when it is no link.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
