import CShims
import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import Synchronization
import SystemSupport

/// Packet counters of one direction of a relayed link.
public struct DirectionCounters: Sendable, Equatable, Codable {
    /// Packets and bytes delivered to the other side, both families.
    public var relayedPackets: Int = 0
    public var relayedBytes: Int = 0
    /// The IPv4 and the IPv6 share of `relayedPackets` and `relayedBytes` (relayed ones only).
    public var ipv4Packets: Int = 0
    public var ipv4Bytes: Int = 0
    public var ipv6Packets: Int = 0
    public var ipv6Bytes: Int = 0
    /// Packets dropped, by reason: `bearerDisconnected`, `ipv4NotGranted`, `ipv6NotGranted`,
    /// `wrongSource`, `wrongDestination`, `notIP`, `loss`, `writeFailed`, `linkLayerMismatch`,
    /// `noMuxLink`, `wrongDevice` (docs/simulator.md).
    public var dropped: [String: Int] = [:]

    public init() {}

    /// All dropped packets, whatever the reason.
    public var droppedPackets: Int { dropped.values.reduce(0, +) }
}

/// Counters of a relayed link: uplink = device → network, downlink = network → device.
public struct LinkCounters: Sendable, Equatable, Codable {
    public var uplink = DirectionCounters()
    public var downlink = DirectionCounters()
    public init() {}
}

/// Opens a TUN queue for `name` inside namespace `namespace` (the device is created when it
/// does not exist, and disappears when the last queue closes). Any thread.
func openTUN(namespace: String, name: String) throws -> Int32 {
    var error = [CChar](repeating: 0, count: 256)
    let fd = cshims_tun_open_in_netns("/run/netns/\(namespace)", name, &error, error.count)
    guard fd >= 0 else {
        let message = String(decoding: error.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw CellpathError(.unavailable, "cannot create TUN device \(name) in \(namespace): \(message)")
    }
    return fd
}

/// Relays IP packets between two TUN queues, one thread per direction, applying the path
/// conditions; for a cellular link only while the bearer is connected and only packets of
/// the assigned address (as a PGW does). A QMI modem's link also has the `qmimuxN` devices its
/// host added, and a data path (`BearerDataPath`): the device the bearer's packets use, or
/// none while firmware and kernel disagree. Thread-safe.
final class PacketRelay: Sendable {
    /// What a cellular link lets through: per family, the granted address (IPv4) or /64 prefix
    /// (IPv6) that uplink packets must come from and downlink packets go to; nil = not granted.
    struct Grant: Equatable {
        var ipv4Address: [UInt8]?
        /// The first 8 bytes of the granted /64.
        var ipv6Prefix: [UInt8]?
        /// The bearer's MTU, advertised with the prefix.
        var mtu = 1500
    }

    /// The link's mutable state, shared by both relay threads and the control thread.
    struct State {
        /// Whether packets pass at all (a cellular bearer is connected; Wi-Fi always).
        var open: Bool
        /// The bearer's grant; nil = no address filtering (Wi-Fi).
        var grant: Grant?
        var counters = LinkCounters()
        /// The device side's multiplexed devices (`qmimuxN`), by name.
        var muxDevices: [String: Int32] = [:]
        /// Descriptors of removed mux devices, closed by the uplink thread (their only reader).
        var retired: [Int32] = []
        /// How many removed mux devices' descriptors the uplink thread has closed.
        var retiredClosed = 0
        /// Where the bearer's packets flow.
        var path: BearerDataPath = .master
    }

    let name: String
    private let deviceFD: Int32
    private let networkFD: Int32
    private let uplinkConditions: LinkConditions
    private let downlinkConditions: LinkConditions
    private let state: Mutex<State>
    /// The link's gateway sends router advertisements for the bearer's /64: when it opens and
    /// in answer to router solicitations (RouterAdvertisement.swift).
    private let advertisesPrefix: Bool
    private let stopped = Atomic<Bool>(false)
    private let threads = Mutex<[pthread_t]>([])
    /// A pipe whose read end is in the uplink thread's poll set: written to make it close removed
    /// mux devices now, not at its next turn (nil without one: then within 100 ms).
    private let uplinkWake = try? FileDescriptor.pipe(nonBlocking: true)

    /// Takes ownership of both descriptors (closed by `stop()`).
    init(
        name: String, deviceFD: Int32, networkFD: Int32, conditions: LinkConditions, open: Bool,
        advertisesPrefix: Bool = false
    ) {
        self.advertisesPrefix = advertisesPrefix
        self.name = name
        self.deviceFD = deviceFD
        self.networkFD = networkFD
        uplinkConditions = conditions.direction(uplink: true)
        downlinkConditions = conditions.direction(uplink: false)
        state = Mutex(State(open: open, grant: nil))
    }

    /// Starts both relay threads.
    func start() throws {
        for uplink in [true, false] {
            let thread: pthread_t
            do {
                thread = try Threads.start { [self] in self.relay(uplink: uplink) }
            } catch {
                throw CellpathError(.internalError, "cannot start relay thread for \(name): \(error)")
            }
            threads.withLock { $0.append(thread) }
        }
    }

    /// Opens the link for a bearer granted the IPv4 address `ipv4` and/or the IPv6 /64 that holds
    /// `ipv6` (numeric texts; a family without one is dropped as not granted), with `mtu`.
    func open(ipv4: String?, ipv6: String?, mtu: Int) {
        let grant = Grant(
            ipv4Address: ipv4.flatMap(IPAddress.ipv4Bytes),
            ipv6Prefix: ipv6.flatMap(IPAddress.ipv6Bytes).map { Array($0.prefix(8)) }, mtu: mtu)
        state.withLock {
            $0.open = true; $0.grant = grant
        }
        advertisePrefix()
    }

    /// Writes a router advertisement of the granted /64 to the device side, if this link sends them.
    private func advertisePrefix() {
        guard advertisesPrefix, let grant = state.withLock({ $0.grant }), let prefix = grant.ipv6Prefix else { return }
        let packet = RouterAdvertisement.packet(prefix: prefix, mtu: grant.mtu)
        _ = packet.withUnsafeBytes { write(deviceFD, $0.baseAddress, $0.count) }
    }

    /// Closes the link: every packet is dropped as `bearerDisconnected` from now on.
    func close() {
        state.withLock {
            $0.open = false; $0.grant = nil
        }
    }

    var isOpen: Bool { state.withLock { $0.open } }
    var counters: LinkCounters { state.withLock { $0.counters } }

    /// Sets where the bearer's packets flow.
    func route(through path: BearerDataPath) {
        state.withLock { $0.path = path }
    }

    /// Adds the device side's multiplexed device `name` (its TUN queue `fd`, now owned).
    func addMuxDevice(_ name: String, fd: Int32) {
        state.withLock { $0.muxDevices[name] = fd }
    }

    /// Removes multiplexed device `name`, as qmi_wwan's `del_mux` does before it returns: its queue
    /// is closed by the uplink thread (its only reader), woken for it, and the device has vanished
    /// when this returns (a new one may take its name at once). Waits at most a second.
    func removeMuxDevice(_ name: String) {
        let target: Int? = state.withLock { s in
            guard let fd = s.muxDevices.removeValue(forKey: name) else { return nil }
            s.retired.append(fd)
            return s.retiredClosed + s.retired.count
        }
        guard let target else { return }
        if let wake = uplinkWake?.write { _ = write(wake.rawValue, "w", 1) }
        let deadline = MonotonicClock.now + 1
        while state.withLock({ $0.retiredClosed < target }), !stopped.load(ordering: .relaxed),
            MonotonicClock.now < deadline
        {
            usleep(500)
        }
    }

    /// The names of the multiplexed devices.
    var muxDeviceNames: [String] { state.withLock { Array($0.muxDevices.keys) } }

    /// Stops and joins the threads and closes every descriptor. Call once.
    func stop() {
        Glibc.close(stopKeepingNetworkEnd())
    }

    /// Stops and joins the threads and closes the device's descriptor (its TUN device vanishes);
    /// returns the network end's, which the caller now owns. Call once, instead of `stop()`.
    func stopKeepingNetworkEnd() -> Int32 {
        stopped.store(true, ordering: .relaxed)
        for thread in threads.withLock({ $0 }) { pthread_join(thread, nil) }
        Glibc.close(deviceFD)
        for fd in state.withLock({ Array($0.muxDevices.values) + $0.retired }) { Glibc.close(fd) }
        uplinkWake?.read.close()
        uplinkWake?.write.close()
        return networkFD
    }

    /// The device-side queue the bearer's packets use, or why none does.
    private enum BearerDevice {
        case queue(Int32)
        case none(reason: String)
    }

    private static func bearerDevice(_ s: State, master: Int32) -> BearerDevice {
        switch s.path {
        case .master: .queue(master)
        case .muxLink(let name): s.muxDevices[name].map { .queue($0) } ?? .none(reason: "noMuxLink")
        case .blocked(let reason): .none(reason: reason)
        }
    }

    /// One direction's loop: read what arrives, decide, queue with its delay, deliver what is due.
    private func relay(uplink: Bool) {
        let conditions = uplink ? uplinkConditions : downlinkConditions
        var queue: [(due: Double, packet: [UInt8])] = []
        var head = 0
        var lastDue = 0.0
        var buffer = [UInt8](repeating: 0, count: 65536)
        var generator = SystemRandomNumberGenerator()
        while !stopped.load(ordering: .relaxed) {
            var timeout: Int32 = 100
            if head < queue.count {
                let wait = (queue[head].due - MonotonicClock.now) * 1000
                timeout = max(0, min(100, Int32(wait.rounded(.up))))
            }
            // Uplink reads the net device and its mux devices; downlink the network side.
            let sources = uplink ? deviceSources() : [networkFD]
            var pfds = sources.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&pfds, nfds_t(pfds.count), timeout)
            for pfd in pfds where ready > 0 && pfd.revents & Int16(POLLIN) != 0 {
                if pfd.fd == uplinkWake?.read.rawValue {
                    var bytes = [UInt8](repeating: 0, count: 64)
                    _ = read(pfd.fd, &bytes, bytes.count)  // woken to close removed mux devices: the next turn does
                    continue
                }
                for _ in 0 ..< 256 {
                    let n = read(pfd.fd, &buffer, buffer.count)
                    if n <= 0 { break }
                    let packet = Array(buffer[0 ..< n])
                    if uplink, advertisesPrefix, RouterAdvertisement.isRouterSolicitation(packet) {
                        advertisePrefix()  // the gateway answers; a solicitation goes no further
                        continue
                    }
                    if uplink, let reason = wrongDevice(pfd.fd) {
                        count(uplink: uplink) { $0.dropped[reason, default: 0] += 1 }
                        continue
                    }
                    if let reason = verdict(packet, uplink: uplink, conditions: conditions, generator: &generator) {
                        count(uplink: uplink) { $0.dropped[reason, default: 0] += 1 }
                        continue
                    }
                    var delay = Double(conditions.delayMs)
                    if conditions.jitterMs > 0 {
                        delay += Double(Int.random(in: -conditions.jitterMs ... conditions.jitterMs, using: &generator))
                    }
                    // Never reorder: a packet is due no earlier than the one before it.
                    let due = max(MonotonicClock.now + max(0, delay) / 1000, lastDue)
                    lastDue = due
                    queue.append((due, packet))
                }
            }
            let now = MonotonicClock.now
            while head < queue.count, queue[head].due <= now {
                let packet = queue[head].packet
                head += 1
                let dropped = deliver(packet, uplink: uplink)
                count(uplink: uplink) {
                    if let dropped {
                        $0.dropped[dropped, default: 0] += 1
                        return
                    }
                    $0.relayedPackets += 1
                    $0.relayedBytes += packet.count
                    if packet[0] >> 4 == 6 {
                        $0.ipv6Packets += 1
                        $0.ipv6Bytes += packet.count
                    } else {
                        $0.ipv4Packets += 1
                        $0.ipv4Bytes += packet.count
                    }
                }
            }
            if head > 1024 || head == queue.count { queue.removeFirst(head); head = 0 }
        }
    }

    /// Writes `packet` to the other side while the link is open (downlink: to the device the
    /// bearer uses); nil when it went out whole, else why it was dropped.
    private func deliver(_ packet: [UInt8], uplink: Bool) -> String? {
        state.withLock { s in
            guard s.open else { return "bearerDisconnected" }
            var destination = networkFD
            if !uplink {
                switch Self.bearerDevice(s, master: deviceFD) {
                case .queue(let fd): destination = fd
                case .none(let reason): return reason
                }
            }
            let written = packet.withUnsafeBytes { write(destination, $0.baseAddress, $0.count) }
            return written == packet.count ? nil : "writeFailed"
        }
    }

    /// The device-side queues to read: the net device's, then its mux devices', then the wake-up
    /// pipe. Closes the queues of removed mux devices first (this thread is their only reader).
    private func deviceSources() -> [Int32] {
        state.withLock { s in
            for fd in s.retired { Glibc.close(fd) }
            s.retiredClosed += s.retired.count
            s.retired = []
            return [deviceFD] + s.muxDevices.values.sorted() + (uplinkWake.map { [$0.read.rawValue] } ?? [])
        }
    }

    /// Why an uplink packet read from queue `fd` must be dropped for the device it came from:
    /// the bearer's packets use one device (`wrongDevice` for the others) or none.
    private func wrongDevice(_ fd: Int32) -> String? {
        state.withLock { s in
            guard s.open else { return nil }
            switch Self.bearerDevice(s, master: deviceFD) {
            case .queue(let device): return device == fd ? nil : "wrongDevice"
            case .none(let reason): return reason
            }
        }
    }

    /// Why `packet` must be dropped, or nil to relay it.
    private func verdict(
        _ packet: [UInt8], uplink: Bool, conditions: LinkConditions,
        generator: inout SystemRandomNumberGenerator
    ) -> String? {
        let (open, grant) = state.withLock { ($0.open, $0.grant) }
        if !open { return "bearerDisconnected" }
        let version = packet.first.map { $0 >> 4 }
        // A PGW checks the bearer's own address (IPv4) or prefix (IPv6): source up, destination down.
        let field: ArraySlice<UInt8>, granted: [UInt8]?
        switch version {
        case 4 where packet.count >= 20:
            field = uplink ? packet[12 ..< 16] : packet[16 ..< 20]
            granted = grant?.ipv4Address
            if grant != nil && granted == nil { return "ipv4NotGranted" }
        case 6 where packet.count >= 40:
            field = uplink ? packet[8 ..< 16] : packet[24 ..< 32]
            granted = grant?.ipv6Prefix
            if grant != nil && granted == nil { return "ipv6NotGranted" }
        default:
            return "notIP"
        }
        if let granted, !field.elementsEqual(granted) { return uplink ? "wrongSource" : "wrongDestination" }
        if conditions.lossPercent > 0 && Double.random(in: 0 ..< 100, using: &generator) < conditions.lossPercent {
            return "loss"
        }
        return nil
    }

    private func count(uplink: Bool, _ update: (inout DirectionCounters) -> Void) {
        state.withLock { uplink ? update(&$0.counters.uplink) : update(&$0.counters.downlink) }
    }
}
