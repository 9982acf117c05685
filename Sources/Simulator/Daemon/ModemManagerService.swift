import CellpathCore
import Glibc
import SimulatedModems
import Synchronization
import SystemSupport

/// Runs the real ModemManager on the world's modems (scenario `modemManager`, `sim up
/// --modemmanager`): a private D-Bus system bus and polkitd on the host, ModemManager in the
/// device namespace and a private mount namespace whose `/sys` is a copy of the fake sysfs and
/// whose `/dev` holds the modems' pty slaves as `cdc-wdmN` (docs/simulator.md "ModemManager").
/// Files, pid files and logs under `RUN/modemmanager/`. Started after the modems.
final class ModemManagerService: SimulatorService, SleepSignal, KernelEventSink {
    let name = "modemmanager"
    /// How long start-up waits until `mmcli -L` lists every modem.
    static let listTimeout: Double = 90

    /// The programs, in start order: pid file name, log file name.
    enum Program: String, CaseIterable {
        case bus = "dbus-daemon", polkit = "polkitd", modemManager = "ModemManager"
    }

    private let started = Mutex<[(Program, pid_t)]>([])
    /// logind's sleep interface on the bus, for suspend and resume.
    private let logind = Mutex<FakeLogind?>(nil)

    func start(_ context: SimulatorContext) throws {
        let run = context.run, dir = run.modemManagerDirectory
        // polkitd drops to its own user: it must reach the bus socket.
        try FileSystem.makeDirectories(dir, mode: 0o755)
        try FileSystem.makeDirectories("\(dir)/hostdev", mode: 0o700)
        try FileSystem.write(Self.busConfig(run), to: "\(dir)/bus.conf")
        // Router-mode modems have no port for ModemManager.
        let served = context.scenario.modems.indices.filter { !RouterModem.isRouter(context.scenario.modems[$0]) }
        let count = served.count
        try FileSystem.write(served.map {
            "action=add,subsystem=usbmisc,name=cdc-wdm\($0)\naction=add,subsystem=net,name=\(context.topology.modemInterface($0))\n"
        }.joined(), to: "\(dir)/events")
        try FileSystem.write(try Self.mountScript(run, modems: served), to: "\(dir)/mm.sh")
        let environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": run.busAddress]

        try launch(.bus, ["dbus-daemon", "--nofork", "--nopidfile", "--config-file=\(dir)/bus.conf"], run, environment)
        try waitUntil("the D-Bus bus did not come up", run) { FileSystem.exists(run.busSocket) }
        try launch(.polkit, ["/usr/lib/polkit-1/polkitd"], run, environment)
        try waitUntil("polkitd did not register on the bus", run) { Self.hasOwner("org.freedesktop.PolicyKit1", environment) }
        let sleepInterface = try FakeLogind(busAddress: run.busAddress) { context.log($0) }
        logind.withLock { $0 = sleepInterface }
        try launch(.modemManager, ["ip", "netns", "exec", context.topology.ueNamespace, "unshare", "-m",
                                   "--propagation", "private", "sh", "\(dir)/mm.sh"], run, environment)
        try waitUntil("ModemManager did not list the \(count) modem(s) within \(Int(Self.listTimeout)) s",
                      run, seconds: Self.listTimeout) { Self.listedModems(environment) >= count }
        context.log("ModemManager manages \(count) modem(s); bus \(run.busAddress)")
    }

    func stop() {
        let programs = started.withLock { list in defer { list = [] }; return list }
        for (program, pid) in programs.reversed() {
            if program == .bus { logind.withLock { $0?.stop(); $0 = nil } }
            kill(pid, SIGTERM)
            if !Processes.waitGone(pid, seconds: 5) { kill(pid, SIGKILL); _ = Processes.waitGone(pid, seconds: 5) }
        }
        logind.withLock { $0?.stop(); $0 = nil }
    }

    /// Stops the programs that a killed daemon left running: exactly the pids recorded in
    /// `run`'s pid files, while they still run on this world's bus. Returns those it stopped.
    /// The machine sleeps or wakes: logind's PrepareForSleep on the bus (ModemManager removes
    /// every modem on sleep, releasing its inhibitor, and probes them again on resume).
    func prepareForSleep(_ sleeping: Bool) {
        logind.withLock { $0 }?.prepareForSleep(sleeping)
    }

    /// A modem re-enumerated: what udev does on a real machine, done by hand for ModemManager
    /// without udev. Its private `/dev` gets the new control port (the new pty slave bound onto
    /// `/dev/<new port>`) and its `/sys` a fresh copy of the fake sysfs, then ModemManager is told
    /// the old ports went away and the new ones came (`mmcli --report-kernel-event`).
    func reEnumerated(from old: SimulatedModemDevice.KernelNames, to new: SimulatedModemDevice.KernelNames,
                      terminal: String, run: RunDirectory) throws {
        guard let pid = started.withLock({ $0.first { $0.0 == .modemManager }?.1 }),
              terminal.hasPrefix("/dev/pts/") else { return }
        let pts = "\(run.modemManagerDirectory)/hostdev/pts/\(terminal.dropFirst("/dev/pts/".count))"
        let script = "touch /dev/\(new.controlPort) && mount --bind \(pts) /dev/\(new.controlPort)"
            + " && rm -rf /sys/* && cp -a \(run.sysfsRoot)/. /sys/"
        _ = try Subprocess.check(["nsenter", "-t", "\(pid)", "-m", "sh", "-c", script])
        let environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": run.busAddress]
        let events = [("remove", "usbmisc", old.controlPort), ("remove", "net", old.interface),
                      ("add", "usbmisc", new.controlPort), ("add", "net", new.interface)]
        for (action, subsystem, name) in events {
            let event = "action=\(action),subsystem=\(subsystem),name=\(name)"
            let result = try Subprocess.run(["mmcli", "--report-kernel-event=\(event)"], environment: environment)
            if result.status != 0 {
                throw CellpathError(.unavailable,
                                    "ModemManager refused the kernel event \(action) \(name): \(result.text)")
            }
        }
    }

    static func stopLeftovers(_ run: RunDirectory) -> [StoppedProcess] {
        var stopped: [StoppedProcess] = []
        for program in Program.allCases.reversed() {
            let file = pidFile(program, run)
            if let pid = Processes.readPIDFile(file), isOnBus(pid, run) {
                kill(pid, SIGTERM)
                if !Processes.waitGone(pid, seconds: 5), isOnBus(pid, run) { kill(pid, SIGKILL); _ = Processes.waitGone(pid, seconds: 5) }
                stopped.append(StoppedProcess(pid: pid, name: program.rawValue, reason: "\(program.rawValue) of a killed daemon"))
            }
            unlink(file)
        }
        return stopped
    }

    /// The pid file of `program`.
    static func pidFile(_ program: Program, _ run: RunDirectory) -> String { "\(run.modemManagerDirectory)/\(program.rawValue).pid" }

    /// True while `pid` runs with this world's bus address in its environment (all three do).
    static func isOnBus(_ pid: pid_t, _ run: RunDirectory) -> Bool {
        guard Processes.commandLine(pid) != nil, let bytes = try? FileSystem.read("/proc/\(pid)/environ") else { return false }
        let entry = Array("DBUS_SYSTEM_BUS_ADDRESS=\(run.busAddress)".utf8)
        return bytes.split(separator: 0).contains { Array($0) == entry }
    }

    private func launch(_ program: Program, _ arguments: [String], _ run: RunDirectory, _ environment: [String: String]) throws {
        let log = open("\(run.modemManagerDirectory)/\(program.rawValue).log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else { throw CellpathError(.unavailable, "cannot create the \(program.rawValue) log: \(SystemError.text(errno))") }
        defer { close(log) }
        let pid = try Subprocess.start(arguments, Spawn.Options(stdout: log, stderr: log, environment: environment))
        started.withLock { $0.append((program, pid)) }
        try FileSystem.write("\(pid)\n", to: Self.pidFile(program, run))
    }

    /// Polls `ready` until true; throws `message` when a started program exits or on timeout.
    private func waitUntil(_ message: String, _ run: RunDirectory, seconds: Double = 10, _ ready: () -> Bool) throws {
        let deadline = MonotonicClock.now + seconds
        while MonotonicClock.now < deadline {
            if ready() { return }
            for (program, pid) in started.withLock({ $0 }) {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    // Its log goes with the run directory when start-up fails: its last line says why.
                    let last = FileSystem.readText("\(run.modemManagerDirectory)/\(program.rawValue).log")?
                        .split(separator: "\n").last.map { ": \($0)" } ?? ""
                    throw CellpathError(.unavailable, "\(program.rawValue) exited with status \(Spawn.exitStatus(status))\(last)")
                }
            }
            usleep(200_000)
        }
        throw CellpathError(.unavailable, "\(message); see the logs in \(run.modemManagerDirectory)")
    }

    /// Whether `name` has an owner on the bus.
    private static func hasOwner(_ name: String, _ environment: [String: String]) -> Bool {
        guard let result = try? Subprocess.run(["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                                                "org.freedesktop.DBus.NameHasOwner", "string:\(name)"], environment: environment)
        else { return false }
        return result.status == 0 && result.text.contains("boolean true")
    }

    /// How many modems `mmcli -L` lists (0 while ModemManager is not on the bus).
    private static func listedModems(_ environment: [String: String]) -> Int {
        guard let result = try? Subprocess.run(["mmcli", "-L"], environment: environment), result.status == 0 else { return 0 }
        return result.text.split(separator: "\n").filter { $0.contains("/org/freedesktop/ModemManager1/Modem/") }.count
    }

    /// A system bus on `run`'s socket that lets everyone own and call everything (only root
    /// reaches the run directory).
    private static func busConfig(_ run: RunDirectory) -> String {
        let allow = ["user=\"*\"", "own=\"*\"", "send_type=\"method_call\"", "send_type=\"signal\"", "send_type=\"method_return\"",
                     "send_type=\"error\"", "receive_type=\"method_call\"", "receive_type=\"method_return\"",
                     "receive_type=\"error\"", "receive_type=\"signal\""].map { "<allow \($0)/>" }.joined()
        return """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" \
            "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>system</type><listen>unix:path=\(run.busSocket)</listen><auth>EXTERNAL</auth>
            <policy context="default">\(allow)</policy></busconfig>

            """
    }

    /// The script run in ModemManager's private mount namespace: the host's /dev kept aside,
    /// a tmpfs /sys with the fake sysfs, a tmpfs /dev with the usual nodes and each modem's pty
    /// slave as /dev/cdc-wdmN; then ModemManager without udev, fed the ports as kernel events.
    private static func mountScript(_ run: RunDirectory, modems: [Int]) throws -> String {
        let dir = run.modemManagerDirectory, side = "\(dir)/hostdev"
        var ports = ""
        for n in modems {
            guard let target = linkTarget("\(run.devRoot)/cdc-wdm\(n)"), target.hasPrefix("/dev/pts/") else {
                throw CellpathError(.internalError, "\(run.devRoot)/cdc-wdm\(n) is not a pty slave link")
            }
            ports += "touch /dev/cdc-wdm\(n); mount --bind \(side)/pts/\(target.dropFirst("/dev/pts/".count)) /dev/cdc-wdm\(n)\n"
        }
        return """
            set -e
            mount --rbind /dev \(side)
            mount -t tmpfs none /sys; cp -a \(run.sysfsRoot)/. /sys/
            mount -t tmpfs none /dev
            for n in null zero urandom tty ptmx; do touch /dev/$n; mount --bind \(side)/$n /dev/$n; done
            mkdir /dev/pts /dev/net; mount --bind \(side)/pts /dev/pts
            touch /dev/net/tun; mount --bind \(side)/net/tun /dev/net/tun
            \(ports)exec /usr/sbin/ModemManager --test-no-udev --no-auto-scan --initial-kernel-events=\(dir)/events --debug

            """
    }

    /// The target of symbolic link `path`, or nil.
    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let length = readlink(path, &buffer, buffer.count)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
