import SimulatedModems
import SimulatorScenario
import CellpathCore
import Glibc

/// The world's data plane: one relayed TUN pair per modem (wwanN in the device namespace ↔
/// radioN in the carrier) and one for Wi-Fi (wlan0 ↔ wifi0 in the internet namespace).
/// Owns the TUN devices: they exist while it runs and vanish with it. Thread-safe.
public final class DataPlane: Sendable {
    public let topology: WorldTopology
    private let modems: [PacketRelay]
    private let wifi: PacketRelay

    /// Creates the TUN devices in their namespaces and starts relaying (Wi-Fi open, every
    /// bearer disconnected). The namespaces must exist.
    init(topology: WorldTopology, scenario: Scenario) throws {
        self.topology = topology
        var opened: [Int32] = []
        func tun(_ ns: String, _ name: String) throws -> Int32 {
            let fd = try openTUN(namespace: ns, name: name)
            opened.append(fd)
            return fd
        }
        do {
            var modems: [PacketRelay] = []
            for n in 0..<topology.modemCount {
                modems.append(PacketRelay(name: topology.modemInterface(n),
                                          deviceFD: try tun(topology.ueNamespace, topology.modemInterface(n)),
                                          networkFD: try tun(topology.carrierNamespace, topology.radioInterface(n)),
                                          conditions: scenario.cellularPath, open: false))
            }
            wifi = PacketRelay(name: WorldTopology.wlanInterface,
                               deviceFD: try tun(topology.ueNamespace, WorldTopology.wlanInterface),
                               networkFD: try tun(topology.inetNamespace, WorldTopology.wifiPeerInterface),
                               conditions: scenario.wifiPath, open: true)
            self.modems = modems
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

    /// Opens modem `n`'s data path for its bearer address and returns that address (what a
    /// simulated modem does when its bearer connects; configuring wwanN is the host's job).
    @discardableResult
    public func connect(_ n: Int) throws -> String {
        try checkIndex(n)
        let address = topology.bearerAddress(n)
        modems[n].open(address: address)
        return address
    }

    /// Closes modem `n`'s data path: everything it carries is dropped from now on.
    public func disconnect(_ n: Int) throws {
        try checkIndex(n)
        modems[n].close()
    }

    /// Whether modem `n`'s bearer is connected.
    public func isConnected(_ n: Int) -> Bool { modems.indices.contains(n) && modems[n].isOpen }

    /// The modem whose connected bearer holds `address`, if any.
    public func modem(holding address: String) -> Int? {
        modems.indices.first { isConnected($0) && topology.bearerAddress($0) == address }
    }

    /// Counters of modem `n`'s link.
    public func counters(_ n: Int) -> LinkCounters { modems[n].counters }

    /// Counters of the Wi-Fi link.
    public var wifiCounters: LinkCounters { wifi.counters }

    /// Stops every relay and closes the TUN devices (which deletes them). Call once.
    func stop() {
        for relay in modems + [wifi] { relay.stop() }
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
        try connect(modemIndex)
        return .carrier(modemIndex: modemIndex, ipType: ipType)
    }

    /// Closes modem `modemIndex`'s relay (idempotent; unknown indexes are ignored).
    public func disconnect(modemIndex: Int) {
        try? disconnect(modemIndex)
    }
}
