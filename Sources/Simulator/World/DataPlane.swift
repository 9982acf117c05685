import CShims
import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import Synchronization
import SystemSupport

/// The world's data plane: one relayed TUN pair per modem (wwanN in the device namespace ↔
/// radioN in the carrier) and one for Wi-Fi (wlan0 ↔ wifi0 in the internet namespace).
/// Owns the TUN devices: they exist while it runs and vanish with it. Thread-safe.
public final class DataPlane: Sendable {
    public let topology: WorldTopology
    /// Each modem's relay; replaced when the modem re-enumerates (its TUN device is re-created).
    private let relays: Mutex<[PacketRelay]>
    private let wifi: PacketRelay
    private let cellularPath: LinkConditions
    /// Router-mode modems: their relay's device end is the modem's own bearer (`RouterModem`).
    private let routers: Set<Int>
    /// What each modem's network offers (the scenario's `ipType`), and whether it is behind NAT64.
    private let offered: [BearerIPType]
    private let behindNAT64: [Bool]
    /// The families each modem's open relay carries.
    private let granted: Mutex<[Int: BearerIPType]>
    /// A socket in the device namespace, to read its net devices' flags.
    private let deviceNamespaceSocket: Int32

    /// Creates the TUN devices in their namespaces and starts relaying (Wi-Fi open, every
    /// bearer disconnected). The namespaces must exist.
    init(topology: WorldTopology, scenario: Scenario) throws {
        self.topology = topology
        offered = (0 ..< topology.modemCount).map {
            scenario.modems.indices.contains($0) ? scenario.modems[$0].ipType : .ipv4
        }
        behindNAT64 = (0 ..< topology.modemCount).map {
            scenario.modems.indices.contains($0) && scenario.modems[$0].nat64
        }
        granted = Mutex([:])
        // A t7xx modem's host learns its global IPv6 address from the gateway's advertisement.
        func advertisesPrefix(_ n: Int) -> Bool {
            scenario.modems.indices.contains(n) && scenario.modems[n].profile.ipv6LinkLocalOnly
        }
        var error = [CChar](repeating: 0, count: 256)
        deviceNamespaceSocket = cshims_socket_in_netns(
            "/run/netns/\(topology.ueNamespace)", AF_INET,
            Int32(SOCK_DGRAM.rawValue), 0, &error, error.count)
        var opened: [Int32] = deviceNamespaceSocket >= 0 ? [deviceNamespaceSocket] : []
        cellularPath = scenario.cellularPath
        let routers = Set(RouterModem.indexes(scenario))
        self.routers = routers
        func tun(_ ns: String, _ name: String) throws -> Int32 {
            let fd = try openTUN(namespace: ns, name: name)
            opened.append(fd)
            return fd
        }
        do {
            var modems: [PacketRelay] = []
            for n in 0 ..< topology.modemCount {
                // A router-mode modem's bearer ends in the modem, not in the device.
                let (namespace, name) =
                    routers.contains(n)
                    ? (RouterModem.namespace(prefix: topology.prefix, n), RouterModem.wanInterface)
                    : (topology.ueNamespace, topology.modemInterface(n))
                modems.append(
                    PacketRelay(
                        name: name, deviceFD: try tun(namespace, name),
                        networkFD: try tun(topology.carrierNamespace, topology.radioInterface(n)),
                        conditions: scenario.cellularPath, open: false,
                        advertisesPrefix: advertisesPrefix(n)))
            }
            wifi = PacketRelay(
                name: WorldTopology.wlanInterface,
                deviceFD: try tun(topology.ueNamespace, WorldTopology.wlanInterface),
                networkFD: try tun(topology.inetNamespace, WorldTopology.wifiPeerInterface),
                conditions: scenario.wifiPath, open: true)
            relays = Mutex(modems)
        } catch {
            for fd in opened { close(fd) }
            throw error
        }
        do {
            for relay in modems + [wifi] { try relay.start() }
        } catch {
            stop()
            throw error
        }
    }

    private var modems: [PacketRelay] { relays.withLock { $0 } }

    /// The name of modem `n`'s net device now (`wwanN`, another after a re-enumeration).
    public func modemInterface(_ n: Int) -> String {
        routers.contains(n) ? RouterModem.hostInterface(n) : modems[n].name
    }

    /// Modem `n` re-enumerated: its TUN device is deleted and created again as `name` (a new
    /// ifindex; the kernel forgets its addresses and routes), its bearer disconnected. The
    /// network end (radioN) stays.
    func recreateModemInterface(_ n: Int, name: String) throws {
        try checkIndex(n)
        try disconnect(n)
        let networkFD = modems[n].stopKeepingNetworkEnd()
        let deviceFD: Int32
        do {
            deviceFD = try openTUN(namespace: topology.ueNamespace, name: name)
        } catch {
            close(networkFD)
            throw error
        }
        let relay = PacketRelay(
            name: name, deviceFD: deviceFD, networkFD: networkFD, conditions: cellularPath,
            open: false)
        relays.withLock { $0[n] = relay }
        try relay.start()
    }

    /// Opens modem `n`'s data path for everything its network offers and returns the
    /// assignment (what `sim bearer connect` does; configuring wwanN is the caller's job).
    @discardableResult
    public func connect(_ n: Int) throws -> BearerAssignment {
        try checkIndex(n)
        return open(n, ipType: offered[n])
    }

    /// Opens modem `n`'s relay for exactly the families of `ipType`.
    private func open(_ n: Int, ipType: BearerIPType) -> BearerAssignment {
        let assignment = BearerAssignment.carrier(modemIndex: n, ipType: ipType)
        granted.withLock { $0[n] = ipType }
        modems[n].open(ipv4: assignment.ipv4?.address, ipv6: assignment.ipv6?.address, mtu: assignment.mtu)
        return assignment
    }

    /// Closes modem `n`'s data path: everything it carries is dropped from now on.
    public func disconnect(_ n: Int) throws {
        try checkIndex(n)
        modems[n].close()
        granted.withLock { _ = $0.removeValue(forKey: n) }
    }

    /// Whether modem `n`'s bearer is connected.
    public func isConnected(_ n: Int) -> Bool { modems.indices.contains(n) && modems[n].isOpen }

    /// The families modem `n`'s connected bearer carries, or nil while it is disconnected.
    public func grantedIPType(_ n: Int) -> BearerIPType? {
        isConnected(n) ? granted.withLock { $0[n] } : nil
    }

    /// The modem whose connected bearer holds `address`: its IPv4 address, any address in its
    /// IPv6 /64 (the subscriber's device picks its own interface identifier), or behind NAT64 its
    /// egress address (what the internet sees of it). Nil for none.
    public func modem(holding address: String) -> Int? {
        let v6 = IPAddress.ipv6Bytes(address).map { Array($0.prefix(8)) }
        return modems.indices.first { n in
            guard let type = grantedIPType(n) else { return false }
            if let v6 {
                return type.carriesIPv6
                    && IPAddress.ipv6Bytes(topology.bearerIPv6Address(n)).map { Array($0.prefix(8)) } == v6
            }
            return type.carriesIPv4 && topology.bearerAddress(n) == address
                || type.carriesIPv6 && behindNAT64[n] && topology.nat64EgressAddress(n) == address
        }
    }

    /// Counters of modem `n`'s link.
    public func counters(_ n: Int) -> LinkCounters { modems[n].counters }

    /// Counters of the Wi-Fi link.
    public var wifiCounters: LinkCounters { wifi.counters }

    /// Stops every relay and closes the TUN devices (which deletes them). Call once.
    func stop() {
        for relay in modems + [wifi] { relay.stop() }
        if deviceNamespaceSocket >= 0 { close(deviceNamespaceSocket) }
    }

    private func checkIndex(_ n: Int) throws {
        guard modems.indices.contains(n) else {
            let range = modems.count == 1 ? "only modem 0" : "modems 0 to \(modems.count - 1)"
            throw CellpathError(.usage, "no modem \(n): this world has \(range)")
        }
    }
}

extension DataPlane: BearerNetwork {
    /// Opens modem `modemIndex`'s relay for the families of `ipType` and returns what the
    /// carrier assigns (`BearerAssignment.carrier`). Called on a simulated modem's thread.
    public func connect(modemIndex: Int, ipType: BearerIPType) throws -> BearerAssignment {
        try checkIndex(modemIndex)
        return open(modemIndex, ipType: ipType)
    }

    /// Closes modem `modemIndex`'s relay (idempotent; unknown indexes are ignored).
    public func disconnect(modemIndex: Int) {
        try? disconnect(modemIndex)
    }

    public func route(modemIndex: Int, through path: BearerDataPath) {
        guard modems.indices.contains(modemIndex) else { return }
        modems[modemIndex].route(through: path)
    }

    /// Creates TUN device `qmimuxN` in the device namespace (the lowest N no modem uses) as a
    /// multiplexed device of modem `modemIndex`'s link.
    public func addMuxLink(modemIndex: Int, muxID: UInt8) throws -> String {
        try checkIndex(modemIndex)
        let used = Set(modems.flatMap(\.muxDeviceNames))
        let name = (0...).lazy.map { "qmimux\($0)" }.first { !used.contains($0) }!
        let fd = try openTUN(namespace: topology.ueNamespace, name: name)
        modems[modemIndex].addMuxDevice(name, fd: fd)
        return name
    }

    public func removeMuxLink(modemIndex: Int, name: String) {
        guard modems.indices.contains(modemIndex) else { return }
        modems[modemIndex].removeMuxDevice(name)
    }

    /// Whether modem `modemIndex`'s net device is up in the device namespace (SIOCGIFFLAGS).
    public func isInterfaceUp(modemIndex: Int) -> Bool {
        guard deviceNamespaceSocket >= 0, modems.indices.contains(modemIndex) else { return false }
        var request = ifreq()
        let name = Array(topology.modemInterface(modemIndex).utf8.prefix(Int(IFNAMSIZ) - 1))
        withUnsafeMutableBytes(of: &request.ifr_ifrn.ifrn_name) { buffer in
            for (i, byte) in name.enumerated() { buffer[i] = byte }
        }
        guard ioctl(deviceNamespaceSocket, UInt(SIOCGIFFLAGS), &request) == 0 else { return false }
        return request.ifr_ifru.ifru_flags & Int16(IFF_UP) != 0
    }
}
