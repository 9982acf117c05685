import CShims
import CellpathCore
import Glibc

/// Starts and waits for external programs with posix_spawn. The child gets stdin from
/// /dev/null (unless inherited), default signal handling, an empty signal mask, and no
/// descriptor of ours but 0, 1 and 2. Any thread; `run` blocks.
public enum Spawn {
    /// Directories searched for programs after the caller's PATH (sudo and CI shells may lack sbin).
    public static let searchPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// How to start a program.
    public struct Options: Sendable {
        /// Descriptor for the child's stdin (nil: /dev/null, or ours with `inheritStdin`).
        public var stdin: Int32?
        /// Descriptor for the child's stdout (nil: inherit).
        public var stdout: Int32?
        /// Descriptor for the child's stderr (nil: inherit).
        public var stderr: Int32?
        /// Keep our stdin instead of /dev/null.
        public var inheritStdin = false
        /// Environment (nil: ours); `searchPath` is appended to its PATH.
        public var environment: [String: String]?
        /// Start the child in a new session (detached from our terminal and process group).
        public var newSession = false

        public init(
            stdin: Int32? = nil, stdout: Int32? = nil, stderr: Int32? = nil, inheritStdin: Bool = false,
            environment: [String: String]? = nil, newSession: Bool = false
        ) {
            self.stdin = stdin
            self.stdout = stdout
            self.stderr = stderr
            self.inheritStdin = inheritStdin
            self.environment = environment
            self.newSession = newSession
        }
    }

    /// The outcome of a finished program: exit status (128+signal when killed) and its output.
    public struct Result: Sendable {
        public var status: Int32
        public var output: [UInt8]
        /// The output as UTF-8 text (invalid bytes replaced).
        public var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// Starts `arguments` and returns its pid without waiting.
    public static func start(_ arguments: [String], _ options: Options = Options()) throws(SystemError) -> pid_t {
        precondition(!arguments.isEmpty, "Spawn.start needs a program")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let fd = options.stdin {
            posix_spawn_file_actions_adddup2(&actions, fd, 0)
        } else if !options.inheritStdin {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let fd = options.stdout { posix_spawn_file_actions_adddup2(&actions, fd, 1) }
        if let fd = options.stderr { posix_spawn_file_actions_adddup2(&actions, fd, 2) }
        // Descriptors opened without O_CLOEXEC elsewhere (by a C library) must not leak either.
        _ = cshims_spawn_addclosefrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if options.newSession { flags |= cshims_spawn_setsid_flag() }
        posix_spawnattr_setflags(&attributes, flags)

        var environment = options.environment ?? ProcessEnvironment.current()
        let path = environment["PATH"].map { $0 + ":" + searchPath } ?? searchPath
        environment["PATH"] = path
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, resolve(arguments[0], path: path), &actions, &attributes, argv, envp)
        guard rc == 0 else { throw SystemError("cannot start \(arguments[0])", code: rc) }
        return pid
    }

    /// Runs `arguments` to completion, capturing stdout and stderr together.
    public static func run(_ arguments: [String], environment: [String: String]? = nil) throws(SystemError) -> Result {
        let pipe = try FileDescriptor.pipe()
        let pid = try start(
            arguments, Options(stdout: pipe.write.rawValue, stderr: pipe.write.rawValue, environment: environment))
        pipe.write.close()
        let output = (try? IO.readAll(pipe.read.rawValue)) ?? []
        return Result(status: wait(pid), output: output)
    }

    /// Waits for `pid` and returns its exit status (128+signal when killed by a signal; -1 on error).
    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        return exitStatus(status)
    }

    /// Decodes a waitpid status into an exit code (128+signal when killed by a signal).
    public static func exitStatus(_ status: Int32) -> Int32 {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Finds `name` in the colon-separated `path` (names with a '/' are used as they are).
    public static func resolve(_ name: String, path: String) -> String {
        if name.contains("/") { return name }
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return name
    }
}

extension Spawn {
    /// Replaces this process with `arguments` (found in `environment`'s PATH and `searchPath`),
    /// with every signal at its default and none blocked, and no descriptor beyond 0–2 left
    /// open: the pid, the signals and the exit status are then the program's own, as with a
    /// shell's `exec`. Returns only when that is impossible.
    public static func replaceProcess(_ arguments: [String], environment: [String: String]) -> SystemError {
        precondition(!arguments.isEmpty, "Spawn.replaceProcess needs a program")
        var environment = environment
        let path = environment["PATH"].map { $0 + ":" + searchPath } ?? searchPath
        environment["PATH"] = path
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        for signal in Int32(1) ..< Int32(32) where signal != SIGKILL && signal != SIGSTOP {
            Glibc.signal(signal, SIG_DFL)
        }
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        closefrom(3)
        execve(resolve(arguments[0], path: path), argv, envp)
        return SystemError("cannot run \(arguments[0])")
    }
}
