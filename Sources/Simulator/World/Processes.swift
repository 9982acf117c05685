import Glibc
import SystemSupport

/// Looks at and stops processes recorded in pid files, making sure a recycled pid is never
/// signalled: the process must still run the expected program. Any thread.
enum Processes {
    /// The command line of `pid` (argv), or nil when it is gone or a zombie.
    static func commandLine(_ pid: pid_t) -> [String]? {
        guard let bytes = try? FileSystem.read("/proc/\(pid)/cmdline"), !bytes.isEmpty else { return nil }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// Reads a pid file: the pid on its first line, or nil.
    static func readPIDFile(_ path: String) -> pid_t? {
        guard let text = FileSystem.readText(path), let pid = pid_t(text.trimmingTrailingNewlines()), pid > 1 else {
            return nil
        }
        return pid
    }

    /// True while `pid` runs a program whose argv contains every string of `markers`.
    static func isRunning(_ pid: pid_t, markers: [String]) -> Bool {
        guard let argv = commandLine(pid) else { return false }
        return markers.allSatisfy { argv.contains($0) }
    }

    /// Sends SIGTERM to `pid` if it still matches `markers`, waits up to `grace` seconds, then
    /// SIGKILL; returns when it is gone (children are reaped when they are ours).
    static func stop(_ pid: pid_t, markers: [String], grace: Double = 5) {
        guard isRunning(pid, markers: markers) else { return }
        kill(pid, SIGTERM)
        if waitGone(pid, seconds: grace) { return }
        kill(pid, SIGKILL)
        _ = waitGone(pid, seconds: 5)
    }

    /// Polls until `pid` has exited (reaping it if it is our child); false on timeout.
    static func waitGone(_ pid: pid_t, seconds: Double) -> Bool {
        let deadline = MonotonicClock.now + seconds
        while MonotonicClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return true }
            if commandLine(pid) == nil { return true }
            usleep(20_000)
        }
        return commandLine(pid) == nil
    }
}
