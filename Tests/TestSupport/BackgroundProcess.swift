import CellpathCore
import Glibc

/// A child left running while a test works (tcpdump, a server, a delayed command). It starts
/// with an empty signal mask and default handlers, so that SIGINT reaches it (test runners
/// block some signals in their threads); `stop()` or deinit ends and reaps it.
public final class BackgroundProcess {
    public let pid: pid_t
    private var reaped = false

    /// Starts `arguments` (searched in PATH) with stdin from /dev/null and stdout and stderr
    /// appended to `output` (default: /dev/null).
    public init(_ arguments: [String], output: String = "/dev/null", environment: [String: String]? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        pid = try Spawn.start(arguments, actions: &actions, environment: environment)
    }

    /// Waits up to `timeoutMs` for the child to exit; true when it did.
    public func wait(timeoutMs: Int) -> Bool {
        if reaped { return true }
        var status: Int32 = 0
        for _ in 0..<(max(timeoutMs, 0) / 20 + 1) {
            if waitpid(pid, &status, WNOHANG) == pid {
                reaped = true
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

/// posix_spawn with what every test child needs: default signal handling and an environment.
enum Spawn {
    static func start(_ arguments: [String], actions: inout posix_spawn_file_actions_t,
                      environment: [String: String]?) throws -> pid_t {
        precondition(!arguments.isEmpty)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), defaults = sigset_t()
        sigemptyset(&empty)
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM, SIGPIPE, SIGCHLD] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessEnvironment.current()).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard rc == 0 else { throw ProcessError.spawn(arguments[0], rc) }
        return pid
    }
}
