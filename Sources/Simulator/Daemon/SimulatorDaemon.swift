import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport

/// How to run the simulator daemon: which world (prefix) and which scenario.
public struct DaemonOptions: Sendable, Equatable {
    public var prefix: String
    /// A scenario file; nil = the built-in default world.
    public var scenarioPath: String?
    /// Run ModemManager on the modems whatever the scenario says (`--modemmanager`).
    public var modemManager: Bool
    /// Device captures whose modems join the world (`--device-capture`), after the scenario's
    /// modems, or alone without a scenario.
    public var deviceCaptures: [String]

    public init(
        prefix: String = WorldTopology.defaultPrefix, scenarioPath: String? = nil, modemManager: Bool = false,
        deviceCaptures: [String] = []
    ) {
        self.prefix = prefix
        self.scenarioPath = scenarioPath
        self.modemManager = modemManager
        self.deviceCaptures = deviceCaptures
    }

    /// The scenario file's (or the built-in) scenario with the captured devices' modems.
    func scenario() throws -> Scenario {
        let scenario = try scenarioPath.map { try Scenario.load(path: $0) } ?? .builtIn
        guard !deviceCaptures.isEmpty else { return scenario }
        let modems = try deviceCaptures.flatMap { try DeviceCapture.load(path: $0) }
        return try scenario.adding(captured: modems, replacingModems: scenarioPath == nil)
    }

    /// The cellpath arguments that run this daemon in the foreground (what a detached
    /// `sim up` re-executes): `sim up --foreground --prefix P [--scenario FILE] [--modemmanager]`.
    public var foregroundArguments: [String] {
        ["sim", "up", "--foreground", "--prefix", prefix] + (scenarioPath.map { ["--scenario", $0] } ?? [])
            + (modemManager ? ["--modemmanager"] : []) + deviceCaptures.flatMap { ["--device-capture", $0] }
    }

    /// The argv marker that identifies a running daemon in /proc/PID/cmdline.
    static let processMarkers = ["--foreground"]
}

/// The simulator daemon: builds the world, runs the data path, DNS and the hosted services,
/// answers the control socket, and tears everything down on SIGTERM/SIGINT/SIGHUP or `stop`.
public enum SimulatorDaemon {
    /// What a world hosts besides data path and DNS: the fake API with the carrier endpoint,
    /// and the simulated modems.
    /// With the scenario's `modemManager`, also ModemManager on those modems.
    public static func standardServices(_ scenario: Scenario = .builtIn) -> [any SimulatorService] {
        [WebServicesService(), ModemFleetService()] + (scenario.modemManager ? [ModemManagerService()] : [])
    }

    /// Runs the daemon (with `services`, default `standardServices()`) in the calling process until it is told to stop; returns after the
    /// world is torn down. Must run on the main thread of a process that does nothing else
    /// (it installs signal handlers). Throws when the world cannot be built (after undoing it).
    public static func run(_ options: DaemonOptions, services: [any SimulatorService]? = nil) throws {
        try WorldTopology.validate(prefix: options.prefix)
        var scenario = try options.scenario()
        if options.modemManager { scenario.modemManager = true }
        let run = RunDirectory(prefix: options.prefix)
        if let pid = SimulatedWorld.liveDaemon(run), pid != getpid() {
            throw CellpathError(
                .unavailable, "the simulated world \(options.prefix) is already up (daemon pid \(pid))",
                hint: "cellpath sim down --prefix \(options.prefix)")
        }
        // Leftovers of a daemon that was killed: stop its children and delete its namespaces.
        SimulatedWorld.removeLeftovers(prefix: options.prefix, removeFiles: false)
        try FileSystem.makeDirectories(run.path, mode: 0o755)
        try FileSystem.write("\(getpid())\n", to: run.daemonPIDFile)
        let signals = try SignalWatcher(signals: SignalWatcher.termination + [SIGHUP])
        let world = RunningWorld(
            scenario: scenario,
            topology: WorldTopology(prefix: options.prefix, scenario: scenario),
            run: run, services: services ?? standardServices(scenario))
        defer { world.tearDown(); signals.stop() }
        do {
            try world.bringUp()
        } catch {
            DaemonLog.write("[\(options.prefix)] error: \(error)")
            throw error
        }
        DaemonLog.write(
            "[\(options.prefix)] world up: daemon pid \(getpid()), \(scenario.modems.count) modem(s), control socket \(run.controlSocket)"
        )
        world.serve(signals: signals)
        DaemonLog.write("[\(options.prefix)] stopping")
    }
}

/// The daemon's world while it runs. Main thread only.
final class RunningWorld {
    let scenario: Scenario
    let topology: WorldTopology
    let run: RunDirectory
    let services: [any SimulatorService]
    var builder: WorldBuilder { WorldBuilder(topology: topology, scenario: scenario) }
    private(set) var dataPlane: DataPlane?
    /// The SIM in each modem now (hot-swaps change it); the carrier identifies subscribers by it.
    let sims: SIMSlots
    /// The cell each modem camps on now (handovers change it); the fake API tells operators by it.
    let servingCells: ServingCells
    /// Between a `suspend` and its `resume`.
    var suspended = false
    /// The scenario's events not fired yet, earliest first, and when the world came up.
    var scheduledEvents: [ScenarioEvent] = []
    var upSince = 0.0
    private var dns: [(server: DNSServer, pid: pid_t, running: Bool)] = []
    /// tayga and unbound of a NAT64 carrier.
    private var children: [WorldChild] = []
    private(set) var startedServices: [any SimulatorService] = []
    private var controlFD: Int32 = -1
    private var stopRequested = false

    init(scenario: Scenario, topology: WorldTopology, run: RunDirectory, services: [any SimulatorService]) {
        self.scenario = scenario
        self.topology = topology
        self.run = run
        self.services = services
        sims = SIMSlots(scenario.modems)
        servingCells = ServingCells(modems: scenario.modems.count)
    }

    /// Builds the world in order: namespaces, TUN devices + relay, links and routes, TLS,
    /// DNS, services, control socket. On error the caller calls `tearDown()`.
    func bringUp() throws {
        try FileSystem.write(scenario.encoded(), to: run.scenarioFile)
        try builder.createNamespaces()
        let routers = RouterModem.indexes(scenario).map { RouterModem(topology: topology, index: $0) }
        for router in routers { try router.createNamespace() }
        let dataPlane = try DataPlane(topology: topology, scenario: scenario)
        self.dataPlane = dataPlane
        try builder.configureLinks()
        // Router-mode modems connect by themselves: their bearer is up from the start.
        for router in routers {
            try router.configure()
            try dataPlane.connect(modemIndex: router.index, ipType: .ipv4)
            children.append(try router.startDHCP(run: run, logFD: 2))
        }
        try TestCertificates.make(in: run)
        for server in DNSServer.all(topology, nat64: scenario.nat64) {
            let pid = try server.start(run: run, logFD: 2)
            dns.append((server, pid, true))
        }
        if scenario.nat64 {
            let nat64 = NAT64Carrier(
                topology: topology, run: run, modems: scenario.modems.indices.filter { scenario.modems[$0].nat64 })
            try nat64.prepare()
            try builder.configureNAT64()
            children += try nat64.start(logFD: 2)
        }
        let context = SimulatorContext(
            scenario: scenario, topology: topology, run: run,
            subscribers: WorldDirectory(
                scenario: scenario, dataPlane: dataPlane,
                sims: sims, servingCells: servingCells),
            dataPlane: dataPlane)
        for service in services {
            startedServices.append(service)
            try service.start(context)
            context.log("service \(service.name) started")
        }
        // The carrier identifies the SIM in the slot each simulated modem uses now.
        if let modems = startedServices.lazy.compactMap({ $0 as? any ModemControlSource & SimulatorService }).first {
            sims.follow { modems.controlStatus(modem: $0)?.activeSlot }
        }
        try openControlSocket()
        scheduledEvents = scenario.events.enumerated()
            .sorted { ($0.element.atSeconds, $0.offset) < ($1.element.atSeconds, $1.offset) }.map(\.element)
        upSince = MonotonicClock.now
    }

    /// Answers control requests until a signal or `stop` arrives; reaps dnsmasq children.
    func serve(signals: SignalWatcher) {
        while !stopRequested {
            var fds = [
                pollfd(fd: signals.readFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: controlFD, events: Int16(POLLIN), revents: 0)
            ]
            let ready = poll(&fds, 2, nextEventTimeoutMs())
            reapChildren()
            fireDueEvents()
            if ready < 0 { continue }
            if fds[0].revents != 0, let signal = signals.take() {
                DaemonLog.write("[\(topology.prefix)] received signal \(signal)")
                return
            }
            if fds[1].revents != 0 { acceptOne() }
        }
    }

    /// Undoes whatever `bringUp` did, in reverse order; leaves only the logs. Idempotent.
    func tearDown() {
        if controlFD >= 0 { close(controlFD); controlFD = -1 }
        unlink(run.controlSocket)
        for service in startedServices.reversed() { service.stop() }
        startedServices = []
        for entry in dns where entry.running {
            kill(entry.pid, SIGTERM)
            if !Processes.waitGone(entry.pid, seconds: 3) { kill(entry.pid, SIGKILL); _ = Spawn.wait(entry.pid) }
        }
        dns = []
        for child in children.reversed() where child.running {
            kill(child.pid, SIGTERM)
            if !Processes.waitGone(child.pid, seconds: 3) { kill(child.pid, SIGKILL); _ = Spawn.wait(child.pid) }
        }
        children = []
        // What still runs in the namespaces (a proxy started on the device, a shell's children)
        // would keep them alive after they are deleted (`sim down` stops them first and reports them).
        let namespaces =
            topology.namespaces
            + RouterModem.namespaces(prefix: topology.prefix, among: WorldBuilder.listNamespaces())
        let marks = WorldProcesses.marks(namespaces: namespaces, run: run, daemon: nil)
        for process in WorldProcesses.stopAll(marks) {
            DaemonLog.write("[\(topology.prefix)] stopped \(process.name) (pid \(process.pid), \(process.reason))")
        }
        dataPlane?.stop()
        dataPlane = nil
        WorldBuilder.destroy(topology)
        SimulatedWorld.removeRunFiles(run, keepLog: true)
    }

    private func openControlSocket() throws {
        unlink(run.controlSocket)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0, UnixSocketAddress.connect(fd, path: run.controlSocket, bind: true) == 0, listen(fd, 16) == 0
        else {
            let reason = SystemError.text(errno)
            if fd >= 0 { close(fd) }
            throw CellpathError(.unavailable, "cannot listen on \(run.controlSocket): \(reason)")
        }
        chmod(run.controlSocket, 0o600)
        controlFD = fd
    }

    private func acceptOne() {
        guard let connection = try? FileDescriptor.accept(controlFD) else { return }
        defer { connection.close() }
        let client = connection.rawValue
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let line = LineIO.readLine(client, limit: 65536) else { return }
        let response: ControlResponse
        do {
            let request = try JSONDecoding.decode(ControlRequest.self, from: Array(line))
            response = try handle(request)
        } catch let error as CellpathError {
            response = ControlResponse(ok: false, error: error.message, errorKind: error.kind)
        } catch {
            response = ControlResponse(ok: false, error: "bad control request: \(error)", errorKind: .usage)
        }
        guard var bytes = try? JSONEncoding.encode(response) else { return }
        bytes.append(0x0a)
        try? IO.sendAll(client, Array(bytes))
    }

    private func handle(_ request: ControlRequest) throws -> ControlResponse {
        guard let dataPlane else { throw CellpathError(.unavailable, "the world is not up") }
        switch request.command {
        case .status:
            return ControlResponse(ok: true, status: status())
        case .connect:
            let n = request.modem ?? 0
            try refuseRouterModem(n)
            let assignment = try dataPlane.connect(n)
            do {
                try builder.configureBearer(n, assignment, interface: dataPlane.modemInterface(n))
            } catch {
                try? dataPlane.disconnect(n)
                throw error
            }
            let addresses = [assignment.ipv4?.address, assignment.ipv6?.address].compactMap { $0 }
            DaemonLog.write("[\(topology.prefix)] modem \(n): bearer connected, \(addresses.joined(separator: " "))")
            return ControlResponse(ok: true, status: status(), address: addresses.first)
        case .disconnect:
            let n = request.modem ?? 0
            try refuseRouterModem(n)
            try dataPlane.disconnect(n)
            try builder.deconfigureBearer(n, interface: dataPlane.modemInterface(n))
            DaemonLog.write("[\(topology.prefix)] modem \(n): bearer disconnected")
            return ControlResponse(ok: true, status: status())
        case .unlockFCC:
            let n = request.modem ?? 0
            let modems = startedServices.lazy.compactMap { $0 as? any ModemControlSource }.first
            guard modems?.unlockFCC(modem: n) == true else {
                throw CellpathError(.usage, "no running simulated modem \(n) in this world")
            }
            DaemonLog.write("[\(topology.prefix)] modem \(n): FCC lock lifted")
            return ControlResponse(ok: true, status: status())
        case .stop:
            stopRequested = true
            return ControlResponse(ok: true)
        case .reset, .swapSIM, .removeSIM, .suspend, .resume, .reportDNS, .handover:
            try handleEvent(request, dataPlane: dataPlane)
            return ControlResponse(ok: true, status: status())
        }
    }

    /// `sim bearer` does not apply to a router-mode modem: its bearer is its own and always up.
    private func refuseRouterModem(_ n: Int) throws {
        guard scenario.modems.indices.contains(n), RouterModem.isRouter(scenario.modems[n]) else { return }
        throw CellpathError(
            .usage,
            "modem \(n) is a router-mode modem: its bearer is always up "
                + "(use \(RouterModem.hostInterface(n)))")
    }

    /// The live status, with full personal data (the client redacts it).
    private func status() -> SimulatorStatus {
        let listed = WorldBuilder.listNamespaces(), existing = Set(listed)
        let controlSource = startedServices.lazy.compactMap { $0 as? any ModemControlSource }.first
        var modems: [ModemStatus] = []
        for (n, modem) in scenario.modems.enumerated() {
            let granted = dataPlane?.grantedIPType(n)
            let connected = granted != nil
            // Without a simulated modem serving it, the modem is as its scenario starts it.
            let control = controlSource?.controlStatus(modem: n) ?? ModemControlStatus(initial: modem)
            let network = modem.network(slot: sims.active(n), cell: servingCells.cell(n))
            modems.append(
                ModemStatus(
                    index: n, protocol: modem.protocol, imei: modem.imei,
                    interface: dataPlane?.modemInterface(n) ?? topology.modemInterface(n),
                    radioInterface: topology.radioInterface(n),
                    sim: sims.sim(n).map { SIMIdentity(iccid: $0.iccid, imsi: $0.imsi, msisdn: $0.msisdn) },
                    operatorID: network.operatorID, operatorName: network.operatorName,
                    radio: control.radio, registration: control.registration, roaming: control.roaming,
                    pin: control.pin, pinAttemptsLeft: control.pinAttemptsLeft,
                    controlPort: (controlSource?.device(modem: n)?.controlPortName
                        ?? modem.profile.controlDevice(index: n)?.name).map { "\(run.path)/dev/\($0)" } ?? "",
                    bearer: connected ? .connected : .disconnected,
                    address: granted?.carriesIPv4 == true ? topology.bearerAddress(n) : nil,
                    ipType: granted?.rawValue,
                    ipv6Address: granted?.carriesIPv6 == true ? topology.bearerIPv6Address(n) : nil,
                    ipv6Prefix: granted?.carriesIPv6 == true ? topology.bearerIPv6Prefix(n) : nil,
                    counters: dataPlane?.counters(n) ?? LinkCounters()))
        }
        var services = dns.map {
            ServiceStatus(
                name: "dns-\($0.server.name)", running: $0.running, pid: $0.pid,
                detail: "\($0.server.listenDetail) in \($0.server.namespace)")
        }
        services += children.map { ServiceStatus(name: $0.name, running: $0.running, pid: $0.pid, detail: $0.detail) }
        services += startedServices.map { ServiceStatus(name: $0.name, running: true) }
        return SimulatorStatus(
            prefix: topology.prefix, state: .up, daemonPID: getpid(), runDirectory: run.path,
            namespaces: topology.namespaces.filter { existing.contains($0) }
                + RouterModem.namespaces(prefix: topology.prefix, among: listed), modems: modems,
            wifi: dataPlane?.wifiCounters, services: services)
    }

    /// Notes dnsmasq, tayga and unbound children that exited (they are not restarted: the log tells why).
    private func reapChildren() {
        for i in children.indices where children[i].running {
            var status: Int32 = 0
            if waitpid(children[i].pid, &status, WNOHANG) == children[i].pid {
                children[i].running = false
                DaemonLog.write(
                    "[\(topology.prefix)] \(children[i].name) exited with status \(Spawn.exitStatus(status))")
            }
        }
        for i in dns.indices where dns[i].running {
            var status: Int32 = 0
            if waitpid(dns[i].pid, &status, WNOHANG) == dns[i].pid {
                dns[i].running = false
                DaemonLog.write(
                    "[\(topology.prefix)] dnsmasq (\(dns[i].server.name) DNS) exited with status \(Spawn.exitStatus(status))"
                )
            }
        }
    }
}

/// The subscriber directory of a running world: a SIM holds the bearer address of its modem
/// while that modem's bearer is connected, on the network it registers on: the second slot's own
/// while that slot is active, else that of the cell the modem camps on. Thread-safe.
struct WorldDirectory: SubscriberDirectory {
    let scenario: Scenario
    let dataPlane: DataPlane
    let sims: SIMSlots
    let servingCells: ServingCells

    func subscriber(holding address: String) -> SimulatedSIM? {
        dataPlane.modem(holding: address).flatMap { sims.sim($0) }
    }

    func subscriber(msisdn: String) -> SimulatedSIM? {
        sims.all.lazy.compactMap { $0 }.first { $0.msisdn == msisdn }
    }

    func network(holding address: String) -> SimulatedNetwork? {
        dataPlane.modem(holding: address).map {
            scenario.modems[$0].network(slot: sims.active($0), cell: servingCells.cell($0))
        }
    }
}
