import CellpathCore
import Glibc
import SystemSupport

/// A child left running while a test works (tcpdump, a server, a delayed command). It starts
/// with an empty signal mask and default handlers, so that SIGINT reaches it (test runners
/// block some signals in their threads); `stop()` or deinit ends and reaps it.
public final class BackgroundProcess {
    public let pid: pid_t
    private var reaped = false
    /// The exit status (or 128 + the signal that ended it), once reaped.
    public private(set) var exitStatus: Int32?

    /// Starts `arguments` (searched in PATH) with stdin from /dev/null and stdout and stderr
    /// appended to `output` (default: /dev/null).
    public init(_ arguments: [String], output: String = "/dev/null", environment: [String: String]? = nil) throws {
        let log = try FileDescriptor.open(output, O_WRONLY | O_CREAT | O_APPEND)
        pid = try Spawn.start(
            arguments, Spawn.Options(stdout: log.rawValue, stderr: log.rawValue, environment: environment))
    }

    /// Waits up to `timeoutMs` for the child to exit; true when it did.
    public func wait(timeoutMs: Int) -> Bool {
        if reaped { return true }
        var status: Int32 = 0
        for _ in 0 ..< (max(timeoutMs, 0) / 20 + 1) {
            if waitpid(pid, &status, WNOHANG) == pid {
                reaped = true
                exitStatus = Spawn.exitStatus(status)
                return true
            }
            usleep(20_000)
        }
        return false
    }

    /// SIGINT (tcpdump flushes and closes its file), then SIGKILL after 3 s; reaps the child.
    public func stop() {
        guard !reaped else { return }
        kill(pid, SIGINT)
        if wait(timeoutMs: 3000) { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        reaped = true
    }

    deinit { stop() }
}
