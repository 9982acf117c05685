import CellpathCore
import Glibc

/// Runs the external programs the simulated world is built with (`ip`, `openssl`, `dnsmasq`).
/// Blocking; call from a plain thread, never from Swift's cooperative pool in a hot path.
enum Subprocess {
    /// The PATH used to find programs: sbin included (sudo and CI shells may lack it).
    static let searchPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// The outcome of a finished program: exit status (128+signal when killed) and its output.
    struct Result {
        var status: Int32
        var output: String
    }

    /// Runs `arguments` to completion with stdin from /dev/null, capturing stdout and stderr together.
    static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        var fds: [Int32] = [0, 0]
        guard makePipe(&fds) else { throw spawnError(arguments, errno) }
        let pid: pid_t
        do {
            pid = try spawn(arguments, stdout: fds[1], stderr: fds[1], environment: environment)
        } catch {
            close(fds[0]); close(fds[1])
            throw error
        }
        close(fds[1])
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = read(fds[0], &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            output.append(contentsOf: buffer[0..<n])
        }
        close(fds[0])
        return Result(status: wait(pid), output: String(decoding: output, as: UTF8.self))
    }

    /// Runs `arguments` and throws `.unavailable` with its output when it does not exit 0.
    @discardableResult
    static func check(_ arguments: [String]) throws -> String {
        let result = try run(arguments)
        guard result.status == 0 else {
            let detail = result.output.trimmingTrailingNewlines()
            throw CellpathError(.unavailable, "`\(arguments.joined(separator: " "))` failed (status \(result.status))\(detail.isEmpty ? "" : ": \(detail)")")
        }
        return result.output
    }

    /// Starts `arguments` with stdin from /dev/null and the given stdout/stderr descriptors
    /// (-1 = inherit), in a new session when `newSession`; returns its pid without waiting.
    static func spawn(_ arguments: [String], stdout: Int32 = -1, stderr: Int32 = -1,
                      environment: [String: String]? = nil, newSession: Bool = false,
                      inheritStdin: Bool = false) throws -> pid_t {
        precondition(!arguments.isEmpty)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if !inheritStdin { posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) }
        if stdout >= 0 { posix_spawn_file_actions_adddup2(&actions, stdout, 1) }
        if stderr >= 0 { posix_spawn_file_actions_adddup2(&actions, stderr, 2) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Children start with default signal dispositions and an empty mask, whatever ours are.
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        // glibc's POSIX_SPAWN_SETSID (0x80) is hidden behind _GNU_SOURCE from Swift.
        if newSession { flags |= 0x80 }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var env = environment ?? ProcessEnvironment.current()
        env["PATH"] = env["PATH"].map { $0 + ":" + searchPath } ?? searchPath
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        let program = resolve(arguments[0], path: env["PATH"]!)
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw spawnError(arguments, rc) }
        return pid
    }

    /// Waits for `pid` and returns its exit status (128+signal when killed by a signal).
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        return exitStatus(status)
    }

    /// Decodes a waitpid status into an exit code (128+signal when killed by a signal).
    static func exitStatus(_ status: Int32) -> Int32 {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }


    /// Finds `name` in `path` (names with a '/' are used as they are).
    static func resolve(_ name: String, path: String) -> String {
        if name.contains("/") { return name }
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return name
    }

    private static func spawnError(_ arguments: [String], _ code: Int32) -> CellpathError {
        CellpathError(.unavailable, "cannot start \(arguments[0]): \(String(cString: strerror(code)))",
                      hint: code == ENOENT ? "install it (sudo make deps)" : nil)
    }
}

extension String {
    /// The string without trailing newlines and spaces.
    func trimmingTrailingNewlines() -> String {
        var s = Substring(self)
        while let last = s.last, last.isNewline || last == " " { s = s.dropLast() }
        return String(s)
    }
}

/// pipe() with both ends close-on-exec (and non-blocking when asked); false on error.
func makePipe(_ fds: inout [Int32], nonBlocking: Bool = false) -> Bool {
    guard pipe(&fds) == 0 else { return false }
    for fd in fds {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    }
    return true
}
