import SystemSupport

/// A running process's open descriptors and memory, read from `/proc/PID`: what the load and
/// soak tests watch for leaks.
public struct ProcessUsage: Sendable, Equatable, CustomStringConvertible {
    /// Entries of `/proc/PID/fd`.
    public var descriptors: Int
    /// Resident memory now (`VmRSS`) and at its peak so far (`VmHWM`), in KiB.
    public var rssKiB: Int
    public var peakRSSKiB: Int

    /// The usage of `pid`, or nil once it has exited.
    public static func of(_ pid: Int32) -> ProcessUsage? {
        guard let status = FileSystem.readText("/proc/\(pid)/status"),
            let descriptors = FileSystem.entries("/proc/\(pid)/fd")?.count
        else { return nil }
        func kiB(_ field: String) -> Int? {
            status.split(separator: "\n").first { $0.hasPrefix(field + ":") }.flatMap { line in
                line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            }
        }
        guard let rss = kiB("VmRSS"), let peak = kiB("VmHWM") else { return nil }
        return ProcessUsage(descriptors: descriptors, rssKiB: rss, peakRSSKiB: peak)
    }

    public var description: String { "\(descriptors) fds, RSS \(rssKiB) KiB (peak \(peakRSSKiB) KiB)" }
}
