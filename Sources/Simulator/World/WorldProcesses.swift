import Glibc
import SystemSupport

/// A process that `sim down` stopped, and why it belonged to the world.
public struct StoppedProcess: Sendable, Equatable, Codable {
    public var pid: Int32
    /// Its command name (`/proc/PID/comm`), e.g. `mbim-proxy`.
    public var name: String
    /// `in cp-ue`, `holds cdc-wdm0`, or `dnsmasq of a killed daemon`.
    public var reason: String

    public init(pid: Int32, name: String, reason: String) {
        self.pid = pid
        self.name = name
        self.reason = reason
    }
}

/// Finds and stops the processes that would outlive a world: those running in one of its
/// network namespaces (an `mbim-proxy` or `qmi-proxy` that `mbimcli -p` / `qmicli -p` started
/// on the device, children of `sim exec`, a shell from `ip netns exec`), which keep the deleted
/// namespace alive, and those holding one of its modem control ports open. A process's network
/// namespace is the device and inode of `/proc/PID/ns/net`, compared with those of the bind
/// mount `/run/netns/NAME` (what `ip netns pids` does). Blocking; any thread.
enum WorldProcesses {
    /// A file's identity: device and inode.
    struct FileIdentity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// What identifies a world's processes, taken while the world still exists.
    struct Marks: Sendable {
        /// Namespace identity → its name.
        var namespaces: [FileIdentity: String] = [:]
        /// Control port device number (the pty slave's `st_rdev`) → port name (`cdc-wdm0`).
        var ports: [UInt64: String] = [:]
    }

    /// The marks of the named namespaces that exist, and of the control ports under the run
    /// directory's `dev/` when `ports` (only while the daemon that owns the ptys is alive: the
    /// links of a dead daemon may name pseudo-terminals that others use now).
    static func marks(namespaces names: [String], run: RunDirectory, ports: Bool) -> Marks {
        var marks = Marks()
        for name in names {
            if let identity = identity("/run/netns/\(name)") { marks.namespaces[identity] = name }
        }
        guard ports, let links = entries("\(run.path)/dev") else { return marks }
        for entry in links {
            var info = stat()
            if stat("\(run.path)/dev/\(entry)", &info) == 0, info.st_mode & S_IFMT == S_IFCHR {
                marks.ports[UInt64(info.st_rdev)] = entry
            }
        }
        return marks
    }

    /// Finds and stops (`stop`) the world's processes, again while there are any (a process may
    /// start another while it is being stopped), sparing the running `daemon` and its children
    /// (dnsmasq), which the daemon stops itself. Returns each process it stopped once.
    static func stopAll(_ marks: Marks, sparing daemon: pid_t? = nil) -> [StoppedProcess] {
        var stopped: [StoppedProcess] = []
        for _ in 0..<3 {
            let found = find(marks, sparing: daemon)
            if found.isEmpty { break }
            stop(found, marks: marks)
            stopped += found.filter { process in !stopped.contains { $0.pid == process.pid } }
        }
        return stopped
    }

    /// Every process in a marked namespace or holding a marked port, except this process and
    /// its ancestors (a `sim down` run through `sim exec` stops the world, not itself), and
    /// `daemon` with its children.
    static func find(_ marks: Marks, sparing daemon: pid_t? = nil) -> [StoppedProcess] {
        guard !marks.namespaces.isEmpty || !marks.ports.isEmpty, let pids = entries("/proc") else { return [] }
        let spared = Set(ancestors() + (daemon.map { [$0] } ?? []))
        var found: [StoppedProcess] = []
        for entry in pids {
            guard let pid = Int32(entry), pid > 1, !spared.contains(pid), let reason = reason(pid, marks) else { continue }
            if let daemon, parent(of: pid) == daemon { continue }
            found.append(StoppedProcess(pid: pid, name: commandName(pid), reason: reason))
        }
        return found.sorted { $0.pid < $1.pid }
    }

    /// SIGTERM to each, then SIGKILL to those still in the world after `grace` seconds; waits
    /// (bounded) until they are gone. A pid is signalled only while it still belongs to the world.
    static func stop(_ processes: [StoppedProcess], marks: Marks, grace: Double = 3) {
        for process in processes where reason(process.pid, marks) != nil { kill(process.pid, SIGTERM) }
        let deadline = MonotonicClock.now + grace
        var left = processes
        while !left.isEmpty, MonotonicClock.now < deadline {
            usleep(20_000)
            left = left.filter { !Processes.waitGone($0.pid, seconds: 0) }
        }
        for process in left where reason(process.pid, marks) != nil { kill(process.pid, SIGKILL) }
        for process in left { _ = Processes.waitGone(process.pid, seconds: 5) }
    }

    /// Why `pid` belongs to the world, or nil.
    private static func reason(_ pid: Int32, _ marks: Marks) -> String? {
        if let identity = identity("/proc/\(pid)/ns/net"), let name = marks.namespaces[identity] { return "in \(name)" }
        guard !marks.ports.isEmpty, let fds = entries("/proc/\(pid)/fd") else { return nil }
        for fd in fds {
            var info = stat()
            if stat("/proc/\(pid)/fd/\(fd)", &info) == 0, info.st_mode & S_IFMT == S_IFCHR,
               let port = marks.ports[UInt64(info.st_rdev)] {
                return "holds \(port)"
            }
        }
        return nil
    }

    /// The names in directory `path` (without `.` and `..`), or nil when it cannot be read.
    private static func entries(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    private static func identity(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    private static func commandName(_ pid: Int32) -> String {
        FileSystem.readText("/proc/\(pid)/comm")?.trimmingTrailingNewlines() ?? "?"
    }

    /// This process and its ancestors.
    private static func ancestors() -> [Int32] {
        var chain: [Int32] = []
        var pid = getpid()
        while pid > 1, chain.count < 256 {
            chain.append(pid)
            guard let next = parent(of: pid) else { break }
            pid = next
        }
        return chain
    }

    /// The parent of `pid`, from `/proc/PID/stat`: "PID (comm) STATE PPID …", where comm may
    /// hold spaces and parentheses and the last ')' ends it.
    private static func parent(of pid: Int32) -> Int32? {
        guard let stat = FileSystem.readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }
}
