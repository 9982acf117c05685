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
/// namespace alive, and those on the host holding one of its modem control ports open.
///
/// Only provably the world's: a process's network namespace is the device and inode of
/// `/proc/PID/ns/net`, compared with those of the bind mount `/run/netns/NAME` (what `ip netns
/// pids` does), which the marks keep open so that a deleted namespace's inode cannot be given to
/// another one meanwhile. A port holder has an open file that is the port's pty slave itself
/// (same devpts instance and inode), while the world's daemon (same pid and start time) still
/// holds that slave (so the pty number is not reused), and was started after the daemon.
/// Blocking; any thread.
enum WorldProcesses {
    /// A file's identity: device and inode.
    struct FileIdentity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// A process's identity: a recycled pid has another start time.
    struct ProcessIdentity: Equatable, Sendable {
        var pid: pid_t
        /// Clock ticks after boot (`/proc/PID/stat` field 22).
        var startTime: UInt64
    }

    /// What identifies a world's processes, taken while the world still exists. Keeps the marked
    /// namespaces open (alive) until released.
    final class Marks: Sendable {
        /// Namespace identity → its name.
        let namespaces: [FileIdentity: String]
        /// The daemon whose modems own `ports`.
        let daemon: ProcessIdentity?
        /// Control port (its pty slave's identity) → port name (`cdc-wdm0`).
        let ports: [FileIdentity: String]
        private let pins: [Int32]

        init(
            namespaces: [FileIdentity: String] = [:], daemon: ProcessIdentity? = nil,
            ports: [FileIdentity: String] = [:], pins: [Int32] = []
        ) {
            self.namespaces = namespaces
            self.daemon = daemon
            self.ports = ports
            self.pins = pins
        }

        deinit { for fd in pins { close(fd) } }
    }

    /// The marks of the named namespaces that exist, and of the control ports under the run
    /// directory's `dev/` when `daemon` (the world's live daemon, which owns the ptys) is given:
    /// the links of a dead daemon may name pseudo-terminals that others use now.
    static func marks(namespaces names: [String], run: RunDirectory, daemon: pid_t?) -> Marks {
        var namespaces: [FileIdentity: String] = [:]
        var pins: [Int32] = []
        for name in names {
            let fd = open("/run/netns/\(name)", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var info = stat()
            if fstat(fd, &info) == 0 {
                namespaces[FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))] = name
                pins.append(fd)
            } else {
                close(fd)
            }
        }
        var ports: [FileIdentity: String] = [:]
        guard let pid = daemon, let owner = processIdentity(pid),
            let links = FileSystem.entries("\(run.path)/dev")
        else {
            return Marks(namespaces: namespaces, pins: pins)
        }
        let held = openFiles(pid)
        // Sorted, so that a pty with two links is named by the first (cdc-wdm0 before wwan0…).
        for entry in links.sorted() {
            var info = stat()
            if stat("\(run.path)/dev/\(entry)", &info) == 0, info.st_mode & S_IFMT == S_IFCHR {
                let port = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
                if held.contains(port), ports[port] == nil { ports[port] = entry }
            }
        }
        return Marks(namespaces: namespaces, daemon: owner, ports: ports, pins: pins)
    }

    /// Finds and stops (`stop`) the world's processes, again while there are any (a process may
    /// start another while it is being stopped), sparing the running `daemon` and its children
    /// (dnsmasq), which the daemon stops itself. Returns each process it stopped once.
    static func stopAll(_ marks: Marks, sparing daemon: pid_t? = nil) -> [StoppedProcess] {
        var stopped: [StoppedProcess] = []
        for _ in 0 ..< 3 {
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
        guard !marks.namespaces.isEmpty || !marks.ports.isEmpty,
            let pids = FileSystem.entries("/proc")
        else { return [] }
        let spared = Set(ancestors() + (daemon.map { [$0] } ?? []))
        let ports = livePorts(marks)
        var found: [StoppedProcess] = []
        for entry in pids {
            guard let pid = Int32(entry), pid > 1, !spared.contains(pid), let reason = reason(pid, marks, ports) else {
                continue
            }
            if let daemon, parent(of: pid) == daemon { continue }
            found.append(StoppedProcess(pid: pid, name: commandName(pid), reason: reason))
        }
        return found.sorted { $0.pid < $1.pid }
    }

    /// SIGTERM to each, then SIGKILL to those still in the world after `grace` seconds; waits
    /// (bounded) until they are gone. A pid is signalled only while it still belongs to the world.
    static func stop(_ processes: [StoppedProcess], marks: Marks, grace: Double = 3) {
        var ports = livePorts(marks)
        for process in processes where reason(process.pid, marks, ports) != nil { kill(process.pid, SIGTERM) }
        let deadline = MonotonicClock.now + grace
        var left = processes
        while !left.isEmpty, MonotonicClock.now < deadline {
            usleep(20_000)
            left = left.filter { !Processes.waitGone($0.pid, seconds: 0) }
        }
        ports = livePorts(marks)
        for process in left where reason(process.pid, marks, ports) != nil { kill(process.pid, SIGKILL) }
        for process in left { _ = Processes.waitGone(process.pid, seconds: 5) }
    }

    /// The marked ports whose pty slave the marked daemon still holds open: none once it has
    /// exited or closed them, when their numbers may already be someone else's.
    private static func livePorts(_ marks: Marks) -> [FileIdentity: String] {
        guard let daemon = marks.daemon, !marks.ports.isEmpty, processIdentity(daemon.pid) == daemon else { return [:] }
        let held = openFiles(daemon.pid)
        return marks.ports.filter { held.contains($0.key) }
    }

    /// Why `pid` belongs to the world, or nil: it is in a marked namespace, or it was started
    /// after the daemon and holds one of `ports` (from `livePorts`, taken before this check).
    /// Start times count clock ticks (10 ms): a process started in the daemon's own tick began
    /// before the daemon made its ports, so it is not counted as younger.
    private static func reason(_ pid: Int32, _ marks: Marks, _ ports: [FileIdentity: String]) -> String? {
        if let identity = identity("/proc/\(pid)/ns/net"), let name = marks.namespaces[identity] { return "in \(name)" }
        guard !ports.isEmpty, let daemon = marks.daemon, let process = processIdentity(pid),
            process.startTime > daemon.startTime
        else { return nil }
        for file in openFiles(pid) {
            if let port = ports[file] { return "holds \(port)" }
        }
        return nil
    }

    /// The identities of the files `pid` has open.
    private static func openFiles(_ pid: pid_t) -> Set<FileIdentity> {
        Set((FileSystem.entries("/proc/\(pid)/fd") ?? []).compactMap { identity("/proc/\(pid)/fd/\($0)") })
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

    /// The parent of `pid`.
    private static func parent(of pid: Int32) -> Int32? {
        statFields(pid).flatMap { $0.count > 1 ? Int32($0[1]) : nil }
    }

    /// `pid` with its start time, or nil when it is gone.
    private static func processIdentity(_ pid: pid_t) -> ProcessIdentity? {
        guard let fields = statFields(pid), fields.count > 19, let start = UInt64(fields[19]) else { return nil }
        return ProcessIdentity(pid: pid, startTime: start)
    }

    /// The fields of `/proc/PID/stat` from the third (state) on: "PID (comm) STATE PPID …",
    /// where comm may hold spaces and parentheses and the last ')' ends it.
    private static func statFields(_ pid: pid_t) -> [Substring]? {
        guard let stat = FileSystem.readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
            return nil
        }
        return stat[stat.index(after: close)...].split(separator: " ")
    }
}
