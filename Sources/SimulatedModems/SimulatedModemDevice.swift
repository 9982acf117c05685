import CShims
import CellpathCore
import Glibc
import SimulatorScenario
import Synchronization
import SystemSupport

/// One simulated modem in the shape of its device profile: a pseudo-terminal speaking MBIM or
/// QMI, exposed as `<run dir>/dev/cdc-wdmN` (or `wwanNmbim0`, `wwanNqmi0`), served by its own
/// thread; its AT and XMM RPC ports as further ptys (`wwanNat0`, `wwanNxmmrpc0`); its fake sysfs
/// tree under `<run dir>/sys`. A device without an MBIM or QMI function (router mode, the L850)
/// has no control port. Connecting a bearer calls the world's `BearerNetwork`. Thread-safe.
public final class SimulatedModemDevice: Sendable {
    public let index: Int
    public let modem: SimulatedModem
    /// The ports beside the control port (AT, XMM RPC) under their current names, served while
    /// the device runs.
    private let auxiliaryPorts: Mutex<[AuxiliaryPort]>
    /// What the AT ports answer.
    private let atCommands: ATCommandTable
    public let runDirectory: String
    private let bearerNetwork: any BearerNetwork
    private let control = Mutex<Control>(Control())
    private let names: Mutex<KernelNames>
    /// What a reset or re-plug keeps: the SIM in the slot and the firmware's reported IP (DNS) quirk.
    private let kept: Mutex<(sim: SimulatedSIM?, reportedIP: ReportedIPConfiguration?)>

    /// The names the kernel gave the modem's ports when it last appeared.
    public struct KernelNames: Sendable, Equatable {
        /// The number in the names: N of `cdc-wdmN`, `wwanNmbim0`, `wwanN`, `mhi_hwipN`.
        public var number: Int
        /// The MBIM or QMI control port's kernel name; nil when the device has none.
        public var controlPort: String?
        /// The data net device; nil when the device has none.
        public var interface: String?

        /// The names of a modem of `profile` enumerated as number `number`.
        public static func enumerated(_ number: Int, profile: DeviceProfile) -> KernelNames {
            KernelNames(
                number: number, controlPort: profile.controlDevice(index: number)?.name,
                interface: profile.netDeviceName(index: number))
        }
    }

    /// A while of slow answers: every response `delayMs` later, for `seconds` (a modem that just reset).
    public struct SlowResponses: Sendable, Equatable {
        public var delayMs: Int
        public var seconds: Int
        public init(delayMs: Int, seconds: Int) {
            self.delayMs = delayMs
            self.seconds = seconds
        }
    }

    /// The MBIM or QMI control port's kernel name (`cdc-wdmN`, `wwanNmbim0`, `wwanNqmi0`);
    /// nil when the device has none.
    public var controlPortName: String? { names.withLock { $0.controlPort } }
    /// The data net device (`wwanN`, `mhi_hwipN`, `usbN`); nil when the device has none.
    public var interfaceName: String? { names.withLock { $0.interface } }
    /// The current names of the modem's ports.
    public var kernelNames: KernelNames { names.withLock { $0 } }

    private struct Control: Sendable {
        var thread: pthread_t?
        var wakeWrite: Int32 = -1
        var commands: [Command] = []
        var terminalPath: String?
        var bearerConnected = false
        var controlStatus: ModemControlStatus?
        var qmiClientIDs = 0
        /// Extra delay of every response until `slowUntil` (monotonic seconds).
        var slowDelayMs = 0
        var slowUntil = 0.0
        /// Set by `stop()` once it has taken the thread out; the server exits on its next turn.
        var stopping = false
        /// Set by `start()` while it sets up, so that a concurrent `start()` is refused.
        var starting = false
        /// Started, for a device without a control port (no server thread).
        var serving = false
    }

    enum Command: Sendable {
        case dropBearer(family: BearerIPType?), registration(RegistrationFault), radio(Bool), unlockFCC
        case changeSIM(SimulatedSIM?), reportDNS([String]?), handover(cell: Int)
    }

    /// The control port's node clients open, `<run dir>/dev/cdc-wdmN` (a symlink to the pty
    /// slave); nil without a control port.
    public var devicePath: String? { controlPortName.map { "\(runDirectory)/dev/\($0)" } }
    /// The root of the simulated sysfs: `<run dir>/sys`.
    public var sysfsRoot: String { "\(runDirectory)/sys" }
    /// The pty slave behind `devicePath` while running.
    public var terminalPath: String? { control.withLock { $0.terminalPath } }
    public var isRunning: Bool { control.withLock { $0.thread != nil || $0.stopping || $0.starting || $0.serving } }
    /// Whether a bearer is connected (as of the server thread's last turn).
    public var isBearerConnected: Bool { control.withLock { $0.bearerConnected } }
    /// Radio, registration and PIN as of the server thread's last turn; nil while not running.
    public var controlStatus: ModemControlStatus? { control.withLock { $0.controlStatus } }

    /// How many QMI client IDs (of any service but CTL) are allocated, as of the server thread's
    /// last turn: those that clients have not released. Always 0 for an MBIM modem.
    public var allocatedQMIClientIDs: Int { control.withLock { $0.qmiClientIDs } }

    /// `atCommands`: what the AT ports answer (the identity commands by default).
    public init(
        modem: SimulatedModem, index: Int, runDirectory: String, bearerNetwork: any BearerNetwork,
        atCommands: ATCommandTable? = nil
    ) {
        self.modem = modem
        self.index = index
        self.runDirectory = runDirectory
        self.bearerNetwork = bearerNetwork
        let profile = modem.profile
        var commands = atCommands ?? .standard(for: modem)
        let relay = FCCUnlockRelay()
        if profile.fccLocked && profile.fccUnlock == .atPort {
            commands.registerFCCUnlock(FCCUnlockATState(unlock: relay.unlock))
        }
        fccUnlockRelay = relay
        self.atCommands = commands
        let names = KernelNames.enumerated(index, profile: profile)
        self.names = Mutex(names)
        auxiliaryPorts = Mutex(
            Self.auxiliaryPorts(
                numbered: names.number, profile: profile, commands: commands,
                runDirectory: runDirectory))
        kept = Mutex((modem.sim, modem.reportedIP))
        relay.target { [weak self] in self?.unlockFCC() }
    }

    /// The AT and XMM RPC ports of a modem enumerated as `number`.
    private static func auxiliaryPorts(
        numbered number: Int, profile: DeviceProfile, commands: ATCommandTable,
        runDirectory: String
    ) -> [AuxiliaryPort] {
        profile.extraPortList(index: number).map {
            AuxiliaryPort(
                name: $0.name, devicePath: "\(runDirectory)/dev/\($0.name)",
                commands: $0.type == "AT" ? commands : nil)
        }
    }

    /// The tree of the modem as the kernel last enumerated it (its names carry that number; its
    /// physical device stays in the modem's slot).
    private var sysfs: FakeSysfs {
        FakeSysfs(root: sysfsRoot, index: kernelNames.number, slot: index, modem: modem)
    }

    /// The device nodes of the control port: its kernel name, and for the idealised MBIM modem
    /// also `wwanNmbim0`.
    private var controlNodes: [String] {
        let auxiliary = Set(auxiliaryPorts.withLock { $0 }.map(\.name))
        return sysfs.ports.map(\.name).filter { !auxiliary.contains($0) }.map { "\(runDirectory)/dev/\($0)" }
    }

    /// Opens the pty, creates the device link and sysfs entries and starts serving
    /// (also after `unplug`, as a re-plug with fresh state); with `slow`, answers slowly for a while.
    public func start(slow: SlowResponses? = nil) throws(CellpathError) {
        do {
            try startServing(slow: slow)
        } catch {
            throw error.cellpathError
        }
    }

    /// The modem resets: its ports and net device vanish (clients lose the port, the bearer is
    /// lost), `whileAbsent` runs (the world deletes and re-creates the net device), and it comes
    /// back with fresh state, as number `number` when given (`cdc-wdm1`/`wwan1` instead of
    /// `cdc-wdm0`/`wwan0`), answering slowly for a while (`faults.slowAfterReset…`, or `slow`).
    public func reset(
        as number: Int? = nil, slow: SlowResponses? = nil,
        whileAbsent: (KernelNames) throws -> Void = { _ in }
    ) throws {
        stop()
        if let number {
            let renamed = KernelNames.enumerated(number, profile: modem.profile)
            names.withLock { $0 = renamed }
            auxiliaryPorts.withLock {
                $0 = Self.auxiliaryPorts(
                    numbered: number, profile: modem.profile, commands: atCommands,
                    runDirectory: runDirectory)
            }
        }
        try whileAbsent(kernelNames)
        let faults = modem.faults
        try start(slow: slow ?? SlowResponses(delayMs: faults.slowAfterResetMs, seconds: faults.slowAfterResetSeconds))
    }

    private func startServing(slow: SlowResponses?) throws(ModemDeviceError) {
        let reserved = control.withLock { c in
            guard c.thread == nil, !c.stopping, !c.starting, !c.serving else { return false }
            c.starting = true
            return true
        }
        guard reserved else { throw .alreadyStarted }
        do {
            try launch(slow: slow)
        } catch {
            control.withLock { $0.starting = false }
            throw error
        }
    }

    private func launch(slow: SlowResponses?) throws(ModemDeviceError) {
        for dir in ["\(runDirectory)/dev", sysfsRoot] {
            do {
                try FileSystem.makeDirectories(dir)
            } catch {
                throw .system(error.operation, error.code)
            }
        }
        do {
            try sysfs.create()
            for port in auxiliaryPorts.withLock({ $0 }) { try port.start() }
        } catch {
            removeEntries()
            throw error
        }
        guard let proto = modem.profile.controlProtocol else {
            control.withLock {
                $0.starting = false; $0.serving = true
            }
            return
        }
        let pty: PseudoTerminal, wake: [Int32]
        do {
            (pty, wake) = try openControlPort()
        } catch {
            removeEntries()
            throw error
        }
        var current = modem
        (current.sim, current.reportedIP) = kept.withLock { $0 }
        let state = ModemState(index: index, modem: current, bearerNetwork: bearerNetwork)
        // Before the server thread runs, which publishes every later state.
        control.withLock { $0.controlStatus = state.controlStatus }
        let function: any ControlFunction = proto == .mbim ? MBIMFunction(state: state) : QMIFunction(state: state)
        // qmi_wwan's `qmi/` files, whose writes take effect as the kernel's would.
        let kernelPort =
            proto == .qmi && modem.profile.netDevice == .usbWWAN
            ? interfaceName.flatMap {
                QMIKernelPort(
                    sysfsRoot: sysfsRoot, interfaceName: $0, index: index,
                    bearerNetwork: bearerNetwork)
            }
            : nil
        let server = ModemServer(
            device: self, pty: pty, wakeRead: wake[0], state: state, function: function,
            kernelPort: kernelPort)
        let thread: pthread_t
        do {
            thread = try Threads.start { server.run() }
        } catch {
            pty.close(); close(wake[0]); close(wake[1])
            removeEntries()
            control.withLock { $0.controlStatus = nil }
            throw .system("pthread_create", error.code)
        }
        control.withLock {
            $0.thread = thread
            $0.wakeWrite = wake[1]
            $0.terminalPath = pty.slavePath
            $0.commands = []
            $0.starting = false
            $0.slowDelayMs = slow?.delayMs ?? 0
            $0.slowUntil = MonotonicClock.now + Double(slow?.seconds ?? 0)
        }
    }

    /// The control port's pty, linked from its device nodes, and the server's wake pipe.
    private func openControlPort() throws(ModemDeviceError) -> (PseudoTerminal, [Int32]) {
        let pty = try PseudoTerminal()
        let wake: [Int32]
        do {
            let pipe = try FileDescriptor.pipe(nonBlocking: true)
            wake = [pipe.read.release(), pipe.write.release()]
        } catch {
            pty.close()
            throw .system("pipe", error.code)
        }
        do {
            for node in controlNodes { try link(node, to: pty.slavePath) }
        } catch {
            pty.close(); close(wake[0]); close(wake[1])
            throw error
        }
        return (pty, wake)
    }

    /// Stops serving: the bearer goes down, the pty closes, the device link and sysfs entries
    /// are removed. Idempotent; blocks until the server thread has exited.
    public func stop() {
        let (handle, serving): ((thread: pthread_t, wake: Int32)?, Bool) = control.withLock { c in
            guard let t = c.thread else { return (nil, c.serving) }
            c.thread = nil
            c.stopping = true
            wake(c.wakeWrite)
            return ((t, c.wakeWrite), false)
        }
        guard handle != nil || serving else { return }
        if let handle {
            pthread_join(handle.thread, nil)
            close(handle.wake)
        }
        removeEntries()
        control.withLock { $0 = Control() }
    }

    /// The modem is unplugged: clients lose the port (their reads fail), its device node and
    /// sysfs entries disappear, the bearer's data plane closes. `start()` plugs it back.
    public func unplug() { stop() }

    /// The network drops the connected bearer now (with its indication), as the
    /// `dropBearerAfterSeconds` fault does on a timer. `family`: only that family's call of a
    /// QMI dual-stack bearer (one call per family); MBIM drops the whole session.
    public func dropBearer(family: BearerIPType? = nil) { send(.dropBearer(family: family)) }

    /// Changes the registration (`registered`, `searching`, `denied`, `deregistered`) and sends
    /// the indications a real modem would.
    public func setRegistration(_ registration: RegistrationFault) { send(.registration(registration)) }

    /// Switches the radio on or off (as a user's rfkill would), with its indications.
    public func setRadio(on: Bool) { send(.radio(on)) }

    /// Lifts the profile's FCC lock as its unlock procedure would (until the next unplug or
    /// stop); the radio stays as it is, for the host to switch on.
    public func unlockFCC() { send(.unlockFCC) }

    /// Lets the AT port's FCC unlock reach this device, which does not exist yet when its
    /// command table is built.
    private let fccUnlockRelay: FCCUnlockRelay

    /// The SIM is pulled out (nil) or `sim` is inserted, with the indications of a hot-swap; a
    /// connected bearer is lost. `changeSIM(nil)` then `changeSIM(new)` is a swap.
    public func changeSIM(_ sim: SimulatedSIM?) {
        kept.withLock { $0.sim = sim }
        send(.changeSIM(sim))
    }

    /// The DNS servers the modem reports from now on, also for a bearer that is up (the
    /// `reportedIP.dnsServers` quirk, e.g. `["0.0.0.0", "::"]`); nil = the carrier's.
    public func reportDNS(_ servers: [String]?) {
        kept.withLock {
            var report = $0.reportedIP ?? ReportedIPConfiguration()
            report.dnsServers = servers
            $0.reportedIP = report
        }
        send(.reportDNS(servers))
    }

    /// The modem moves to `network.cells[cell]` (a handover, a drop to 3G, a weaker cell), with
    /// the registration indications of the change. False when the network has no such cell.
    public func handover(to cell: Int) -> Bool {
        guard modem.network.cells.indices.contains(cell) else { return false }
        send(.handover(cell: cell))
        return true
    }

    /// The extra delay of a response sent now (the slow while after a reset).
    func slowDelay(now: Double) -> Double {
        control.withLock { now < $0.slowUntil ? Double($0.slowDelayMs) / 1000 : 0 }
    }

    private func send(_ command: Command) {
        control.withLock { c in
            guard c.thread != nil, !c.stopping else { return }
            c.commands.append(command)
            wake(c.wakeWrite)
        }
    }

    private func wake(_ fd: Int32) {
        var one: UInt8 = 1
        _ = write(fd, &one, 1)
    }

    /// Called on the server thread: takes the pending commands, and whether to stop.
    func takeCommands() -> (commands: [Command], stop: Bool) {
        control.withLock { c in
            defer { c.commands = [] }
            return (c.commands, c.stopping)
        }
    }

    /// Called on the server thread after each turn.
    func publish(bearerConnected: Bool, controlStatus: ModemControlStatus, qmiClientIDs: Int) {
        control.withLock {
            $0.bearerConnected = bearerConnected
            $0.controlStatus = controlStatus
            $0.qmiClientIDs = qmiClientIDs
        }
    }

    private func link(_ path: String, to target: String) throws(ModemDeviceError) {
        unlink(path)
        guard symlink(target, path) == 0 else { throw .system("symlink \(path)", errno) }
    }

    private func removeEntries() {
        for node in controlNodes { unlink(node) }
        for port in auxiliaryPorts.withLock({ $0 }) { port.stop() }
        sysfs.remove()
    }
}

/// The poll loop of one simulated modem; lives on its own thread.
final class ModemServer {
    /// An incomplete frame older than this is dropped: its sender went away.
    static let partialInputTimeout = 0.5
    /// 3GPP cause sent when the network drops a bearer: regular deactivation.
    static let dropCause = 36
    /// How long a frame waits for the client to read the previous one (a loaded machine's mbimcli
    /// can take over a second), and how often it looks.
    static let readWaitLimit = 3.0
    static let readPollInterval = 0.002
    /// How long a junk frame gets to reach the reader's queue before the next frame is written.
    static let junkSettleTime = 0.1

    private let device: SimulatedModemDevice
    private let pty: PseudoTerminal
    private let wakeRead: Int32
    private let state: ModemState
    private let function: any ControlFunction
    private let watch: ClientWatch
    /// The qmi_wwan `qmi/` attributes of a QMI modem's net device, and the data path last routed.
    private let kernelPort: QMIKernelPort?
    private var routedPath: BearerDataPath?
    private var outbox: [(due: Double, bytes: [UInt8])] = []
    private var lastInput = 0.0
    /// When the last frame was written, and whether the next one waits for it to be read.
    private var lastWrite = 0.0
    private var lastWasJunk = false
    private var awaitingRead = false

    init(
        device: SimulatedModemDevice, pty: PseudoTerminal, wakeRead: Int32, state: ModemState,
        function: any ControlFunction, kernelPort: QMIKernelPort?
    ) {
        self.device = device
        self.pty = pty
        self.wakeRead = wakeRead
        self.state = state
        self.function = function
        self.kernelPort = kernelPort
        watch = ClientWatch(path: pty.slavePath, ownDescriptor: pty.slave)
    }

    /// Where the bearer's packets flow now (QMI): with QMAP through the `qmimux` device of the
    /// session's mux id, else through the net device while firmware and `qmi/raw_ip` agree. A
    /// bearer the modem did not open (`sim bearer connect`) bypasses its firmware: the net device.
    private var dataPath: BearerDataPath {
        guard let kernelPort, let qmi = function as? QMIFunction, state.bearer != nil else { return .master }
        if qmi.dataFormat.isQMAP {
            guard let mux = qmi.bearerMuxID, let link = kernelPort.muxLink(for: mux) else {
                return .blocked(reason: "noMuxLink")
            }
            return .muxLink(link)
        }
        let aligned = kernelPort.rawIP == (qmi.dataFormat.linkLayer == .rawIP)
        return aligned ? .master : .blocked(reason: "linkLayerMismatch")
    }

    /// Tells the bearer network where packets flow when that changed.
    private func routeDataPath() {
        let path = dataPath
        guard path != routedPath else { return }
        routedPath = path
        state.bearerNetwork.route(modemIndex: state.index, through: path)
    }

    static func now() -> Double { MonotonicClock.now }

    func run() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var running = true
        routeDataPath()
        while running {
            let now = Self.now()
            let writable = !awaitingRead && outbox.first.map { $0.due <= now } == true
            var fds = [
                pollfd(fd: pty.master, events: Int16(POLLIN) | (writable ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                pollfd(fd: watch.fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: kernelPort?.fd ?? -1, events: Int16(POLLIN), revents: 0)
            ]
            let rc = poll(&fds, nfds_t(fds.count), timeoutMs(now: now))
            if rc < 0 && errno != EINTR { break }
            // Opens and closes first: a client's open always precedes the bytes it writes.
            if watch.drain() { clientsLeft() }
            if fds[3].revents != 0 { kernelPort?.drain() }
            if fds[1].revents != 0 {
                while read(wakeRead, &buffer, buffer.count) > 0 {}
                let (commands, stop) = device.takeCommands()
                if stop { running = false }
                for command in commands where running {
                    switch command {
                    case .dropBearer(let family):
                        enqueue(function.bearerDropped(cause: Self.dropCause, family: family), delay: 0)
                    case .registration(let r):
                        state.registrationFault = r
                        enqueue(function.registrationChanged(), delay: 0)
                    case .radio(let on):
                        state.radioOn = on
                        enqueue(function.registrationChanged(), delay: 0)
                    case .unlockFCC: state.fccUnlocked = true
                    case .changeSIM(let sim): enqueue(function.simChanged(to: sim), delay: 0)
                    case .reportDNS(let servers): state.reportDNS(servers)
                    case .handover(let cell):
                        state.servingCellIndex = cell
                        enqueue(function.registrationChanged(), delay: 0)
                    }
                }
            }
            if !running { break }
            if fds[0].revents & Int16(POLLIN) != 0 {
                let n = read(pty.master, &buffer, buffer.count)
                if n > 0 {
                    let t = Self.now()
                    if function.hasPartialInput && t - lastInput > Self.partialInputTimeout {
                        function.discardPartialInput()
                    }
                    lastInput = t
                    let delay = Double(max(0, state.modem.faults.responseDelayMs)) / 1000 + device.slowDelay(now: t)
                    enqueue(function.receive(Array(buffer[0 ..< n]), now: t), delay: delay)
                }
            }
            let t = Self.now()
            if function.hasPartialInput && t - lastInput > Self.partialInputTimeout { function.discardPartialInput() }
            if let deadline = state.bearerDropDeadline, t >= deadline {
                enqueue(function.bearerDropped(cause: Self.dropCause, family: nil), delay: 0)
            }
            // Published before the responses go out: a client that got an answer then sees the
            // state that answer came from (a released client ID is no longer counted).
            device.publish(
                bearerConnected: state.bearer != nil, controlStatus: state.controlStatus,
                qmiClientIDs: (function as? QMIFunction)?.allocatedClientIDs ?? 0)
            routeDataPath()
            flush(now: t)
        }
        function.shutdown()
        kernelPort?.removeMuxLinks()
        routeDataPath()  // no bearer now: the net device, for a bearer opened without the modem
        device.publish(bearerConnected: false, controlStatus: state.controlStatus, qmiClientIDs: 0)
        watch.close()
        pty.close()
        close(wakeRead)
    }

    private func timeoutMs(now: Double) -> Int32 {
        var next = Double.infinity
        if let first = outbox.first { next = min(next, first.due) }
        if let deadline = state.bearerDropDeadline { next = min(next, deadline) }
        if function.hasPartialInput { next = min(next, lastInput + Self.partialInputTimeout + 0.01) }
        if awaitingRead { next = min(next, now + Self.readPollInterval) }
        if next == .infinity { return -1 }
        return Int32(max(0, min(60_000, ((next - now) * 1000).rounded(.up))))
    }

    /// Queues frames `delay` seconds from now, never ahead of frames already queued.
    private func enqueue(_ frames: [[UInt8]], delay: Double) {
        var due = Self.now() + delay
        if let last = outbox.last { due = max(due, last.due) }
        for frame in frames where !frame.isEmpty { outbox.append((due, frame)) }
    }

    /// The last client closed the port: what it left half-sent or unread goes with it.
    private func clientsLeft() {
        function.discardPartialInput()
        outbox.removeAll()
        _ = tcflush(pty.slave, TCIFLUSH)
    }

    /// Writes the frames that are due; a full pty keeps the rest for the next POLLOUT. With
    /// nobody listening they are dropped, as the cdc-wdm driver drops them for a closed port.
    private func flush(now: Double) {
        if watch.drain() { clientsLeft() }
        if watch.nobodyListening {
            outbox.removeAll { $0.due <= now }
            return
        }
        awaitingRead = false
        while let first = outbox.first, first.due <= now {
            // cdc-wdm gives a client one message per read; a pty joins the frames a late reader
            // finds queued, and libmbim drops a whole read that starts with junk. Keep the
            // boundaries: the next frame goes out once the last one was read (or after a while).
            // Junk also gets time to reach the reader's queue first: the kernel moves bytes
            // written to a pty master there from a worker thread, so "nothing unread" can come
            // before the bytes have even arrived.
            let settling = lastWasJunk && now - lastWrite < Self.junkSettleTime
            if (settling || cshims_pty_unread(pty.slave) > 0) && now - lastWrite < Self.readWaitLimit {
                awaitingRead = true
                return
            }
            let n = first.bytes.withUnsafeBytes { write(pty.master, $0.baseAddress, $0.count) }
            if n < 0 { return }  // EAGAIN: nobody is reading; retry later
            if n < first.bytes.count {
                outbox[0].bytes.removeFirst(n)
                return
            }
            lastWasJunk = function.isJunk(first.bytes)
            outbox.removeFirst()
            lastWrite = now
        }
    }
}
