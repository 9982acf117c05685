import CellpathCore
import Glibc
import ModemDiscovery
import SimulatorScenario
import SystemSupport

/// The `cellpath sim` commands as a library: each function does one command's work and
/// returns values for the CLI to render. Blocking; call from a plain thread (or the main
/// thread), not from Swift's cooperative pool. All but `instructions` need root.
public enum SimulatedWorld {
    /// What `sim down` did, the daemon's own clean-up included.
    public struct DownReport: Sendable, Equatable, Codable {
        public var prefix: String
        /// Whether a running daemon was stopped.
        public var stoppedDaemon: Bool
        /// The daemon's pid, when one was stopped.
        public var daemonPID: Int32?
        /// Processes that outlived the daemon and were stopped: in the world's namespaces
        /// (mbim-proxy, qmi-proxy, children of `sim exec`, dnsmasq of a killed daemon) or
        /// holding its control ports.
        public var stoppedProcesses: [StoppedProcess]
        /// The world's namespaces that existed before (deleted by the daemon or by `sim down`).
        public var removedNamespaces: [String]
        public var removedRunDirectory: Bool
        /// True when nothing of the world existed.
        public var wasAlreadyDown: Bool {
            !stoppedDaemon && stoppedProcesses.isEmpty && removedNamespaces.isEmpty && !removedRunDirectory
        }
    }

    /// `sim up` (detached): validates the scenario, starts `daemonCommand` (default: this
    /// executable with `sim up --foreground …`) in a new session with its output in the log,
    /// and waits until the daemon answers; returns the world's status.
    /// With ModemManager, the wait is longer by `ModemManagerService.listTimeout`.
    public static func up(
        _ options: DaemonOptions, daemonCommand: [String]? = nil,
        timeoutSeconds: Double = 60
    ) throws -> SimulatorStatus {
        try WorldTopology.validate(prefix: options.prefix)
        var scenario = try options.scenario()
        if options.modemManager { scenario.modemManager = true }
        let timeoutSeconds = timeoutSeconds + (scenario.modemManager ? ModemManagerService.listTimeout : 0)
        let run = RunDirectory(prefix: options.prefix)
        if let pid = liveDaemon(run) {
            throw CellpathError(
                .unavailable, "the simulated world \(options.prefix) is already up (daemon pid \(pid))",
                hint: "cellpath sim down --prefix \(options.prefix)")
        }
        removeLeftovers(prefix: options.prefix, removeFiles: true)
        try FileSystem.makeDirectories(run.path, mode: 0o755)
        // The daemon reads the effective scenario from the run directory.
        try FileSystem.write(scenario.encoded(), to: run.scenarioFile)
        var daemonOptions = options
        daemonOptions.scenarioPath = run.scenarioFile
        daemonOptions.modemManager = false  // in the scenario file
        daemonOptions.deviceCaptures = []  // so are the captured devices
        let command =
            daemonCommand ?? [FileSystem.runningExecutable ?? "/proc/self/exe"] + daemonOptions.foregroundArguments
        let log = open(run.logFile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else {
            throw CellpathError(.unavailable, "cannot create \(run.logFile): \(SystemError.text(errno))")
        }
        let pid: pid_t
        do {
            pid = try Subprocess.start(command, Spawn.Options(stdout: log, stderr: log, newSession: true))
        } catch {
            close(log)
            FileSystem.removeTree(run.path)
            throw error
        }
        close(log)
        let deadline = MonotonicClock.now + timeoutSeconds
        while MonotonicClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                let tail = logTail(run, lines: 12)
                removeLeftovers(prefix: options.prefix, removeFiles: true)
                // The daemon's own error says why; dnsmasq's start-up lines around it do not.
                let lines = tail.split(separator: "\n").map(String.init)
                let reason =
                    lines.last { $0.contains("error: ") }.flatMap { line in
                        line.range(ofText: "error: ").map { String(line[$0.upperBound...]) }
                    }
                    ?? lines.last
                throw CellpathError(
                    .unavailable,
                    "the simulator daemon exited during start-up (status \(Spawn.exitStatus(status)))"
                        + (reason.map { ": \($0)" } ?? ""))
            }
            if FileSystem.exists(run.controlSocket),
                let response = try? ControlClient.send(
                    ControlRequest(command: .status), to: run.controlSocket, timeoutSeconds: 5),
                response.ok, let status = response.status
            {
                return status
            }
            usleep(50_000)
        }
        kill(pid, SIGTERM)
        _ = Processes.waitGone(pid, seconds: 10)
        removeLeftovers(prefix: options.prefix, removeFiles: true)
        throw CellpathError(.temporary, "the simulator daemon did not come up within \(Int(timeoutSeconds)) s")
    }

    /// `sim down`: stops the daemon (SIGTERM, then SIGKILL), then every process still in the
    /// world's namespaces or holding its control ports (SIGTERM, SIGKILL after 3 s), then
    /// whatever else is left (dnsmasq of a killed daemon, namespaces, the run directory).
    /// Idempotent; the report names what existed before, whoever removed it.
    public static func down(prefix: String) throws -> DownReport {
        try WorldTopology.validate(prefix: prefix)
        let run = RunDirectory(prefix: prefix)
        let namespacesBefore = existingNamespaces(prefix)
        let hadFiles = FileSystem.exists(run.path)
        let daemon = liveDaemon(run)
        // Taken before the daemon deletes the namespaces and closes the ports.
        let marks = WorldProcesses.marks(namespaces: namespacesBefore, run: run, daemon: daemon)
        var stopped: [StoppedProcess] = []
        if let daemon {
            // Before the daemon, which would otherwise stop them itself, unreported.
            stopped = WorldProcesses.stopAll(marks, sparing: daemon)
            Processes.stop(daemon, markers: DaemonOptions.processMarkers, grace: 15)
        }
        stopped += removeLeftovers(prefix: prefix, removeFiles: true, marks: marks)
        return DownReport(
            prefix: prefix, stoppedDaemon: daemon != nil, daemonPID: daemon, stoppedProcesses: stopped,
            removedNamespaces: namespacesBefore, removedRunDirectory: hadFiles)
    }

    /// `sim status`: the daemon's live status when it answers, otherwise what exists of the world.
    public static func status(prefix: String) throws -> SimulatorStatus {
        try WorldTopology.validate(prefix: prefix)
        let run = RunDirectory(prefix: prefix)
        if let pid = liveDaemon(run) {
            if let response = try? ControlClient.send(ControlRequest(command: .status), to: run.controlSocket),
                response.ok, let status = response.status
            {
                return status
            }
            return SimulatorStatus(
                prefix: prefix, state: .stale, daemonPID: pid, runDirectory: run.path,
                namespaces: existingNamespaces(prefix))
        }
        let namespaces = existingNamespaces(prefix)
        let state: SimulatorStatus.State = namespaces.isEmpty && !FileSystem.exists(run.path) ? .down : .stale
        return SimulatorStatus(prefix: prefix, state: state, runDirectory: run.path, namespaces: namespaces)
    }

    /// `sim bearer connect|disconnect`: opens or closes modem `modem`'s data path and
    /// configures wwanN in the device namespace; returns the status afterwards.
    public static func bearer(connect: Bool, modem: Int = 0, prefix: String) throws -> SimulatorStatus {
        let response = try control(
            ControlRequest(command: connect ? .connect : .disconnect, modem: modem), prefix: prefix)
        guard let status = response.status else {
            throw CellpathError(.internalError, "the simulator daemon sent no status")
        }
        return status
    }

    /// Lifts modem `modem`'s FCC lock (device profiles with `fccLocked`) as its unlock procedure
    /// would, through the daemon's control socket; the lock returns when the modem is re-plugged.
    public static func unlockFCC(modem: Int = 0, prefix: String) throws {
        _ = try control(ControlRequest(command: .unlockFCC, modem: modem), prefix: prefix)
    }

    /// A lifecycle event of the world's modems (docs/simulator.md "Lifecycle events").
    public enum LifecycleEvent: Sendable, Equatable {
        /// The modem resets and re-enumerates, under the next free names with `renumber`; it then
        /// answers `slowMs` late for `slowSeconds` (nil: the scenario's `faults.slowAfterReset…`).
        case reset(renumber: Bool = false, slowMs: Int? = nil, slowSeconds: Int? = nil)
        /// The SIM is removed and this one inserted.
        case swapSIM(SIMIdentity)
        /// The SIM is removed.
        case removeSIM
        /// The modem reports these DNS servers from now on (nil: the carrier's).
        case reportDNS([String]?)
        /// The machine suspends (all modems); `resume` wakes it.
        case suspend, resume
        /// The modem moves to cell `cell` of its network's `cells` (a handover, a weaker cell, 3G).
        case handover(cell: Int)
    }

    /// Makes modem `modem` (every modem for `suspend`/`resume`) undergo `event`; returns the status afterwards.
    public static func lifecycle(_ event: LifecycleEvent, modem: Int = 0, prefix: String) throws -> SimulatorStatus {
        var request = ControlRequest(command: .status, modem: modem)
        switch event {
        case .reset(let renumber, let slowMs, let slowSeconds):
            request.command = .reset
            request.renumber = renumber
            request.slowMs = slowMs
            request.slowSeconds = slowSeconds
        case .swapSIM(let sim):
            request.command = .swapSIM
            request.sim = sim
        case .removeSIM: request.command = .removeSIM
        case .reportDNS(let servers):
            request.command = .reportDNS
            request.dnsServers = servers
        case .suspend: request.command = .suspend
        case .resume: request.command = .resume
        case .handover(let cell):
            request.command = .handover
            request.cell = cell
        }
        guard let status = try control(request, prefix: prefix).status else {
            throw CellpathError(.internalError, "the simulator daemon sent no status")
        }
        return status
    }

    /// `sim env`: the variables that point cellpath and curl at this world (CA, run directory,
    /// namespace, the fake API's base URL and credentials, its token cache, the bus of its ModemManager), in a stable order. Throws `.permission` without
    /// root (the credentials are the daemon's, mode 0600) and `.unavailable` when the world is
    /// not up (its paths would lead nowhere).
    public static func environment(prefix: String) throws -> [(name: String, value: String)] {
        try WorldTopology.validate(prefix: prefix)
        let run = RunDirectory(prefix: prefix)
        guard liveDaemon(run) != nil else { throw notUp(prefix) }
        let topology = WorldTopology(prefix: prefix, modemCount: 0)
        var variables: [(name: String, value: String)] = [
            ("CELLPATH_SIM_PREFIX", prefix),
            ("CELLPATH_SIM_RUN_DIR", run.path),
            ("CELLPATH_SIM_NETNS", topology.ueNamespace),
            ("CELLPATH_SIM_API_URL", "https://\(WorldTopology.apiHost)"),
            ("CELLPATH_API_BASE", "https://\(WorldTopology.apiHost)"),
            ("CELLPATH_CA_FILE", run.caCertificate),
            ("CURL_CA_BUNDLE", run.caCertificate),
            (DeviceRoots.sysfsVariable, run.sysfsRoot),
            (DeviceRoots.devVariable, run.devRoot),
            (DeviceRoots.udevVariable, run.udevRoot),
            ("CELLPATH_STATE_DIR", run.stateDirectory),
            ("CELLPATH_TOKEN_CACHE", run.tokenCache),
            ("CELLPATH_CAMARA_API_ROOT", WorldTopology.operatorURL),
            ("CELLPATH_CAMARA_ISSUER", WorldTopology.operatorURL),
            ("CELLPATH_CAMARA_CLIENT_ID", WorldTopology.camaraClientID),
            ("CELLPATH_CAMARA_KEY_FILE", run.camaraClientKey),
            ("CELLPATH_CAMARA_REDIRECT_URI", WorldTopology.camaraRedirectURI)
        ]
        if FileSystem.exists(run.busSocket) { variables.append(("DBUS_SYSTEM_BUS_ADDRESS", run.busAddress)) }
        if let credentials = SimulatorCredentials.load(run) {
            variables += [
                ("CELLPATH_CLIENT_ID", credentials.clientID), ("CELLPATH_CLIENT_SECRET", credentials.clientSecret),
                ("CELLPATH_SIM_CLIENT_ID", credentials.clientID),
                ("CELLPATH_SIM_CLIENT_SECRET", credentials.clientSecret),
                ("CELLPATH_TWILIO_API_BASE", credentials.twilio.baseURL),
                ("CELLPATH_TWILIO_ACCOUNT_SID", credentials.twilio.accountSID),
                ("CELLPATH_TWILIO_AUTH_TOKEN", credentials.twilio.authToken),
                ("CELLPATH_TWILIO_SERVICE_SID", credentials.twilio.serviceSID),
                ("CELLPATH_VONAGE_API_BASE", credentials.vonage(key: nil).baseURL),
                ("CELLPATH_VONAGE_APPLICATION_ID", credentials.vonage(key: nil).applicationID),
                ("CELLPATH_VONAGE_PRIVATE_KEY", run.vonageApplicationKey),
                ("CELLPATH_VONAGE_NETWORK_API_BASE", WorldTopology.vonageNetworkURL),
                ("CELLPATH_VONAGE_OIDC_BASE", WorldTopology.vonageNetworkURL),
                ("CELLPATH_VONAGE_REDIRECT_URI", WorldTopology.vonageRedirectURI)
            ]
        }
        return variables
    }

    /// A command `sim exec` cannot run, with the status a shell gives for it: 127 when it is
    /// not found, 126 when it is found but cannot be executed.
    public struct CommandNotRunnable: Error, Sendable, Equatable {
        public var message: String
        public var exitStatus: Int32
    }

    /// `sim exec -- CMD…`: replaces this process with `command` in the device namespace (through
    /// `ip netns exec`, which execs in place too), with `environment(prefix:)` added and
    /// stdin/stdout/stderr inherited: the command's pid, signals and exit status are this
    /// process's, as with a shell's `exec`, so that a signal sent to the process group, to the
    /// control group or to this pid reaches the command exactly once. Throws
    /// `CommandNotRunnable` before replacing anything when the command is not found or not
    /// executable; returns only when the exec itself fails.
    public static func exec(prefix: String, command: [String]) throws -> Never {
        guard let name = command.first else { throw CellpathError(.usage, "sim exec needs a command after --") }
        try WorldTopology.validate(prefix: prefix)
        let topology = WorldTopology(prefix: prefix, modemCount: 0)
        guard existingNamespaces(prefix).contains(topology.ueNamespace) else { throw notUp(prefix) }
        var env = ProcessEnvironment.current()
        for (name, value) in try environment(prefix: prefix) { env[name] = value }
        // The PATH the command is looked up in by `ip netns exec` (replaceProcess appends its search path).
        try checkRunnable(name, path: (env["PATH"].map { $0 + ":" } ?? "") + Spawn.searchPath)
        let failure = Spawn.replaceProcess(["ip", "netns", "exec", topology.ueNamespace] + command, environment: env)
        throw CellpathError(failure, kind: .unavailable, hint: "sim exec needs iproute2's ip (make deps)")
    }

    /// Throws `CommandNotRunnable` unless `name` (a path, or a name searched in `path`) is an
    /// executable file, with the messages and statuses of a shell.
    private static func checkRunnable(_ name: String, path: String) throws(CommandNotRunnable) {
        func executable(_ file: String) -> (exists: Bool, runnable: Bool) {
            var info = stat()
            guard stat(file, &info) == 0 else { return (false, false) }
            return (true, info.st_mode & S_IFMT != S_IFDIR && access(file, X_OK) == 0)
        }
        if name.contains("/") {
            let (exists, runnable) = executable(name)
            if !exists { throw CommandNotRunnable(message: "\(name): No such file or directory", exitStatus: 127) }
            if !runnable {
                throw CommandNotRunnable(message: "\(name): cannot execute (not an executable file)", exitStatus: 126)
            }
            return
        }
        var foundButNotRunnable: String?
        for directory in path.split(separator: ":") {
            let (exists, runnable) = executable("\(directory)/\(name)")
            if runnable { return }
            if exists && foundButNotRunnable == nil { foundButNotRunnable = "\(directory)/\(name)" }
        }
        if let file = foundButNotRunnable {
            throw CommandNotRunnable(message: "\(file): cannot execute (not an executable file)", exitStatus: 126)
        }
        throw CommandNotRunnable(message: "\(name): command not found", exitStatus: 127)
    }

    /// `sim log`: the request log of the fake API and the carrier (one JSON object per line).
    public static func requestLog(prefix: String) throws -> [String] {
        try WorldTopology.validate(prefix: prefix)
        let run = RunDirectory(prefix: prefix)
        guard let text = FileSystem.readText(run.requestLog) else {
            if !FileSystem.exists(run.path) { throw notUp(prefix) }
            return []
        }
        return text.split(separator: "\n").map(String.init)
    }

    /// How to use a world that is up: the lines `sim up` prints.
    public static func instructions(prefix: String) -> [String] {
        let topology = WorldTopology(prefix: prefix, modemCount: 0)
        let option = prefix == WorldTopology.defaultPrefix ? "" : " --prefix \(prefix)"
        return [
            "simulated world \(prefix) is up: namespaces \(topology.namespaces.joined(separator: ", "))",
            "run commands on the device:    cellpath sim exec\(option) -- CMD…   (or: ip netns exec \(topology.ueNamespace) CMD…)",
            "environment for your shell:    eval \"$(cellpath sim env\(option))\"",
            "connect the cellular bearer:   cellpath sim bearer connect\(option)",
            "API requests:                  cellpath sim log\(option)",
            "state and counters:            cellpath sim status\(option)",
            "tear it all down:              cellpath sim down\(option)"
        ]
    }

    // MARK: - Shared with the daemon

    /// The pid of the daemon of `run` if it is alive (pid file + command line check).
    static func liveDaemon(_ run: RunDirectory) -> pid_t? {
        guard let pid = Processes.readPIDFile(run.daemonPIDFile),
            Processes.isRunning(pid, markers: DaemonOptions.processMarkers)
        else { return nil }
        return pid
    }

    /// Stops what a killed daemon left running (dnsmasq, dbus-daemon and polkitd recorded in pid files, then
    /// every process in the world's namespaces, or in those of `marks` when given) and deletes
    /// the namespaces; with `removeFiles` also the run directory. Returns the processes it
    /// stopped. Never throws.
    @discardableResult
    static func removeLeftovers(
        prefix: String, removeFiles: Bool, marks: WorldProcesses.Marks? = nil
    ) -> [StoppedProcess] {
        let run = RunDirectory(prefix: prefix)
        let topology = WorldTopology(prefix: prefix, modemCount: 0)
        var stopped: [StoppedProcess] = []
        // (Their names and markers are the same in a NAT64 world.)
        for server in DNSServer.all(topology, nat64: false) {
            if let pid = Processes.readPIDFile(run.dnsPIDFile(server.name)),
                Processes.isRunning(pid, markers: server.markers)
            {
                Processes.stop(pid, markers: server.markers)
                stopped.append(
                    StoppedProcess(pid: pid, name: "dnsmasq", reason: "\(server.name) DNS of a killed daemon"))
            }
            unlink(run.dnsPIDFile(server.name))
        }
        stopped += ModemManagerService.stopLeftovers(run)
        stopped += WorldProcesses.stopAll(
            marks ?? WorldProcesses.marks(namespaces: existingNamespaces(prefix), run: run, daemon: nil))
        WorldBuilder.destroy(topology)
        if removeFiles {
            FileSystem.removeTree(run.path)
            rmdir(RunDirectory.root)  // only when no other world uses it
        }
        return stopped
    }

    /// Removes the run directory's files; keeps the logs (daemon.log, ModemManager's) when asked.
    static func removeRunFiles(_ run: RunDirectory, keepLog: Bool) {
        guard keepLog, FileSystem.exists(run.logFile) else { FileSystem.removeTree(run.path); return }
        let modemManager = run.modemManagerDirectory
        for file in [
            run.daemonPIDFile, run.controlSocket, run.requestLog, run.scenarioFile, run.credentialsFile,
            run.camaraClientKey,
            run.dnsPIDFile("carrier"), run.dnsPIDFile("wifi"), run.busSocket, "\(modemManager)/bus.conf",
            "\(modemManager)/events", "\(modemManager)/mm.sh"
        ]
            + ModemManagerService.Program.allCases.map({ ModemManagerService.pidFile($0, run) })
        { unlink(file) }
        rmdir("\(modemManager)/hostdev")
        FileSystem.removeTree("\(run.path)/tls")
        FileSystem.removeTree("\(run.path)/nat64")
    }

    /// The error for a command that needs the world up.
    static func notUp(_ prefix: String) -> CellpathError {
        let option = prefix == WorldTopology.defaultPrefix ? "" : " --prefix \(prefix)"
        return CellpathError(
            .unavailable, "the simulated world \(prefix) is not up", hint: "start it with: cellpath sim up\(option)")
    }

    private static func control(_ request: ControlRequest, prefix: String) throws -> ControlResponse {
        try WorldTopology.validate(prefix: prefix)
        let run = RunDirectory(prefix: prefix)
        guard liveDaemon(run) != nil else { throw notUp(prefix) }
        let response = try ControlClient.send(request, to: run.controlSocket)
        if !response.ok {
            throw CellpathError(
                response.errorKind ?? .internalError, response.error ?? "the simulator daemon refused the request")
        }
        return response
    }

    private static func existingNamespaces(_ prefix: String) -> [String] {
        let listed = WorldBuilder.listNamespaces(), existing = Set(listed)
        return WorldTopology(prefix: prefix, modemCount: 0).namespaces.filter { existing.contains($0) }
            + RouterModem.namespaces(prefix: prefix, among: listed)
    }

    private static func logTail(_ run: RunDirectory, lines: Int) -> String {
        guard let text = FileSystem.readText(run.logFile) else { return "" }
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }
}
