import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
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
        let modems = context.scenario.modems
        // Router-mode modems and the L850 have no MBIM or QMI port: ModemManager makes no modem of
        // them; it leaves those udev marks ID_MM_DEVICE_IGNORE alone.
        let count = modems.filter { $0.profile.controlProtocol != nil && !$0.modemManagerIgnore }.count
        if let rules = Self.ignoreRules(modems) {
            try FileSystem.makeDirectories("\(dir)/rules.d", mode: 0o755)
            try FileSystem.write(rules, to: "\(dir)/rules.d/\(Self.ignoreRulesFile)")
        }
        try FileSystem.write(Self.kernelEvents(modems), to: "\(dir)/events")
        try FileSystem.write(try Self.mountScript(run, modems: modems), to: "\(dir)/mm.sh")
        let environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": run.busAddress]

        try launch(.bus, ["dbus-daemon", "--nofork", "--nopidfile", "--config-file=\(dir)/bus.conf"], run, environment)
        try waitUntil("the D-Bus bus did not come up", run) { FileSystem.exists(run.busSocket) }
        try launch(.polkit, ["/usr/lib/polkit-1/polkitd"], run, environment)
        try waitUntil("polkitd did not register on the bus", run) {
            Self.hasOwner("org.freedesktop.PolicyKit1", environment)
        }
        let sleepInterface = try FakeLogind(busAddress: run.busAddress) { context.log($0) }
        logind.withLock { $0 = sleepInterface }
        try launch(
            .modemManager,
            [
                "ip", "netns", "exec", context.topology.ueNamespace, "unshare", "-m",
                "--propagation", "private", "sh", "\(dir)/mm.sh"
            ], run, environment)
        try waitUntil(
            "ModemManager did not list the \(count) modem(s) within \(Int(Self.listTimeout)) s",
            run, seconds: Self.listTimeout
        ) { Self.listedModems(environment) >= count }
        context.log("ModemManager manages \(count) modem(s); bus \(run.busAddress)")
    }

    func stop() {
        let programs = started.withLock { list in
            defer { list = [] }; return list
        }
        for (program, pid) in programs.reversed() {
            if program == .bus {
                logind.withLock {
                    $0?.stop(); $0 = nil
                }
            }
            kill(pid, SIGTERM)
            if !Processes.waitGone(pid, seconds: 5) { kill(pid, SIGKILL); _ = Processes.waitGone(pid, seconds: 5) }
        }
        logind.withLock {
            $0?.stop(); $0 = nil
        }
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
    func reEnumerated(
        from old: SimulatedModemDevice.KernelNames, to new: SimulatedModemDevice.KernelNames,
        profile: DeviceProfile, terminal: String, run: RunDirectory
    ) throws {
        guard let pid = started.withLock({ $0.first { $0.0 == .modemManager }?.1 }),
            terminal.hasPrefix("/dev/pts/"), let oldPort = old.controlPort, let newPort = new.controlPort
        else { return }
        let pts = "\(run.modemManagerDirectory)/hostdev/pts/\(terminal.dropFirst("/dev/pts/".count))"
        // The qmi/ binds come off first: removing through them would remove the modems' own files.
        let script =
            "touch /dev/\(newPort) && mount --bind \(pts) /dev/\(newPort)"
            + " && for d in $(find /sys -type d -name qmi); do umount $d; done"
            + " && rm -rf /sys/* && cp -a \(run.sysfsRoot)/. /sys/ && " + Self.bindQMIDirectories(run)
        _ = try Subprocess.check(["nsenter", "-t", "\(pid)", "-m", "sh", "-c", script])
        let environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": run.busAddress]
        let subsystem = profile.controlDevice(index: new.number)?.subsystem ?? "usbmisc"
        var events = [("remove", subsystem, oldPort)]
        if let name = old.interface { events.append(("remove", "net", name)) }
        events.append(("add", subsystem, newPort))
        if let name = new.interface { events.append(("add", "net", name)) }
        for (action, subsystem, name) in events {
            let event = "action=\(action),subsystem=\(subsystem),name=\(name)"
            let result = try Subprocess.run(["mmcli", "--report-kernel-event=\(event)"], environment: environment)
            if result.status != 0 {
                throw CellpathError(
                    .unavailable,
                    "ModemManager refused the kernel event \(action) \(name): \(result.text)")
            }
        }
    }

    /// Shell that binds each qmi_wwan `qmi/` directory of the copied /sys to the original, so that
    /// the modems see what ModemManager writes there.
    static func bindQMIDirectories(_ run: RunDirectory) -> String {
        "for d in $(cd \(run.sysfsRoot) && find . -type d -name qmi); do mount --bind \(run.sysfsRoot)/$d /sys/$d; done"
    }

    static func stopLeftovers(_ run: RunDirectory) -> [StoppedProcess] {
        var stopped: [StoppedProcess] = []
        for program in Program.allCases.reversed() {
            let file = pidFile(program, run)
            if let pid = Processes.readPIDFile(file), isOnBus(pid, run) {
                kill(pid, SIGTERM)
                if !Processes.waitGone(pid, seconds: 5), isOnBus(pid, run) {
                    kill(pid, SIGKILL); _ = Processes.waitGone(pid, seconds: 5)
                }
                stopped.append(
                    StoppedProcess(pid: pid, name: program.rawValue, reason: "\(program.rawValue) of a killed daemon"))
            }
            unlink(file)
        }
        return stopped
    }

    /// The pid file of `program`.
    static func pidFile(_ program: Program, _ run: RunDirectory) -> String {
        "\(run.modemManagerDirectory)/\(program.rawValue).pid"
    }

    /// True while `pid` runs with this world's bus address in its environment (all three do).
    static func isOnBus(_ pid: pid_t, _ run: RunDirectory) -> Bool {
        guard Processes.commandLine(pid) != nil, let bytes = try? FileSystem.read("/proc/\(pid)/environ") else {
            return false
        }
        let entry = Array("DBUS_SYSTEM_BUS_ADDRESS=\(run.busAddress)".utf8)
        return bytes.split(separator: 0).contains { Array($0) == entry }
    }

    private func launch(
        _ program: Program, _ arguments: [String], _ run: RunDirectory, _ environment: [String: String]
    ) throws {
        let log = open(
            "\(run.modemManagerDirectory)/\(program.rawValue).log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else {
            throw CellpathError(.unavailable, "cannot create the \(program.rawValue) log: \(SystemError.text(errno))")
        }
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
                    let last =
                        FileSystem.readText("\(run.modemManagerDirectory)/\(program.rawValue).log")?
                        .split(separator: "\n").last.map { ": \($0)" } ?? ""
                    throw CellpathError(
                        .unavailable, "\(program.rawValue) exited with status \(Spawn.exitStatus(status))\(last)")
                }
            }
            usleep(200_000)
        }
        throw CellpathError(.unavailable, "\(message); see the logs in \(run.modemManagerDirectory)")
    }

    /// Whether `name` has an owner on the bus.
    private static func hasOwner(_ name: String, _ environment: [String: String]) -> Bool {
        guard
            let result = try? Subprocess.run(
                [
                    "dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                    "org.freedesktop.DBus.NameHasOwner", "string:\(name)"
                ], environment: environment)
        else { return false }
        return result.status == 0 && result.text.contains("boolean true")
    }

    /// How many modems `mmcli -L` lists (0 while ModemManager is not on the bus).
    private static func listedModems(_ environment: [String: String]) -> Int {
        guard let result = try? Subprocess.run(["mmcli", "-L"], environment: environment), result.status == 0 else {
            return 0
        }
        return result.text.split(separator: "\n").filter { $0.contains("/org/freedesktop/ModemManager1/Modem/") }.count
    }

    /// A system bus on `run`'s socket that lets everyone own and call everything (only root
    /// reaches the run directory).
    private static func busConfig(_ run: RunDirectory) -> String {
        let allow = [
            "user=\"*\"", "own=\"*\"", "send_type=\"method_call\"", "send_type=\"signal\"",
            "send_type=\"method_return\"",
            "send_type=\"error\"", "receive_type=\"method_call\"", "receive_type=\"method_return\"",
            "receive_type=\"error\"", "receive_type=\"signal\""
        ].map { "<allow \($0)/>" }.joined()
        return """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" \
            "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>system</type><listen>unix:path=\(run.busSocket)</listen><auth>EXTERNAL</auth>
            <policy context="default">\(allow)</policy></busconfig>

            """
    }

    /// The character devices ModemManager is told of for modem `n`, with their subsystems: every
    /// port of its profile (`usbmisc` cdc-wdm, `wwan` ports, `tty` USB serial); the idealised
    /// modem's control port only.
    static func announcedPorts(_ modem: SimulatedModem, _ n: Int) -> [(subsystem: String, name: String)] {
        let ports =
            modem.profile.name == .simulated
            ? modem.profile.controlDevice(index: n).map { [$0] } ?? [] : modem.profile.ports(index: n)
        return ports.map { ($0.subsystem, $0.name) }
    }

    /// The rules file that marks the ignored modems' ports in ModemManager's rules directory.
    static let ignoreRulesFile = "77-mm-cellpath-sim-ignore.rules"

    /// udev rules that mark every port and net device of the modems with `modemManagerIgnore`
    /// `ID_MM_DEVICE_IGNORE=1`, by their kernel names; nil when no modem is ignored. ModemManager
    /// without udev applies the rules of its rules directory itself.
    static func ignoreRules(_ modems: [SimulatedModem]) -> String? {
        let lines = modems.enumerated().filter { $0.element.modemManagerIgnore }.flatMap { n, modem in
            (announcedPorts(modem, n).map(\.name) + (modem.profile.netDeviceName(index: n).map { [$0] } ?? []))
                .map { "KERNEL==\"\($0)\", ENV{ID_MM_DEVICE_IGNORE}=\"1\"\n" }
        }
        return lines.isEmpty ? nil : lines.joined()
    }

    /// The kernel events ModemManager starts from (`--initial-kernel-events`): each modem's ports,
    /// then its net device, as udev would announce them.
    static func kernelEvents(_ modems: [SimulatedModem]) -> String {
        modems.enumerated().map { n, modem in
            let ports = announcedPorts(modem, n).map { "action=add,subsystem=\($0.subsystem),name=\($0.name)\n" }
                .joined()
            let net = modem.profile.netDeviceName(index: n).map { "action=add,subsystem=net,name=\($0)\n" } ?? ""
            return ports + net
        }.joined()
    }

    /// The script run in ModemManager's private mount namespace: the host's /dev kept aside,
    /// a tmpfs /sys with the fake sysfs (its qmi_wwan `qmi/` directories bound to the originals, so
    /// that the modems see what ModemManager writes there), a tmpfs /dev with the usual nodes and
    /// each modem port's pty slave under its kernel name (/dev/cdc-wdmN, /dev/wwanNmbim0,
    /// /dev/wwanNat0…); then ModemManager without udev, fed the ports as kernel events.
    private static func mountScript(_ run: RunDirectory, modems: [SimulatedModem]) throws -> String {
        let dir = run.modemManagerDirectory, side = "\(dir)/hostdev"
        var ports = ""
        for (n, modem) in modems.enumerated() {
            for (_, name) in announcedPorts(modem, n) {
                guard let target = linkTarget("\(run.devRoot)/\(name)"), target.hasPrefix("/dev/pts/") else {
                    throw CellpathError(.internalError, "\(run.devRoot)/\(name) is not a pty slave link")
                }
                let pty = target.dropFirst("/dev/pts/".count)
                ports += "touch /dev/\(name); mount --bind \(side)/pts/\(pty) /dev/\(name)\n"
            }
        }
        return """
            set -e
            mount --rbind /dev \(side)
            mount -t tmpfs none /sys; cp -a \(run.sysfsRoot)/. /sys/
            \(bindQMIDirectories(run))
            mount -t tmpfs none /dev
            for n in null zero urandom tty ptmx; do touch /dev/$n; mount --bind \(side)/$n /dev/$n; done
            mkdir /dev/pts /dev/net; mount --bind \(side)/pts /dev/pts
            touch /dev/net/tun; mount --bind \(side)/net/tun /dev/net/tun
            \(ports)\(fccUnlockScripts)
            \(ignoreRules(modems) == nil ? "" : rulesScript(dir))
            exec /usr/sbin/ModemManager --test-no-udev --no-auto-scan --initial-kernel-events=\(dir)/events --debug

            """
    }

    /// ModemManager's rules directory with the ignore rules added: its own rules copied beside
    /// them and the directory bound over /lib/udev/rules.d.
    private static func rulesScript(_ dir: String) -> String {
        "cp /lib/udev/rules.d/*-mm-*.rules \(dir)/rules.d/ && mount --bind \(dir)/rules.d /lib/udev/rules.d"
    }

    /// Every FCC unlock script ModemManager ships enabled, as a user enables them (they run only
    /// for a modem whose radio-on is refused, chosen by its VID:PID; docs/simulator-modems.md).
    private static let fccUnlockScripts =
        "mount --bind /usr/share/ModemManager/fcc-unlock.available.d /etc/ModemManager/fcc-unlock.d"

    /// The target of symbolic link `path`, or nil.
    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let length = readlink(path, &buffer, buffer.count)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
