import CShims
import CellpathCore
import Glibc
import SimulatedModems
import SimulatedServices
import SimulatorScenario
import SystemSupport

/// A part of the simulated world that the daemon hosts besides the data path and DNS: the
/// fake tru.ID API, the carrier's identification endpoint, the simulated modems.
/// `start` and `stop` are called on the daemon's main thread; a service runs its own threads.
public protocol SimulatorService: AnyObject, Sendable {
    /// Short name for logs and `sim status`, e.g. `api`.
    var name: String { get }
    /// Starts serving; the world (namespaces, links, DNS, TLS files) is up.
    func start(_ context: SimulatorContext) throws
    /// Stops serving and releases everything `start` took. Called once, also after a failed start.
    func stop()
}

/// A service that runs the world's simulated modems and knows their live control-plane state.
protocol ModemControlSource {
    /// Radio, registration and PIN of modem `index` now, or nil when it is not running.
    func controlStatus(modem index: Int) -> ModemControlStatus?
    /// Lifts modem `index`'s FCC lock as its unlock procedure would; false when it is not running.
    func unlockFCC(modem index: Int) -> Bool
    /// The simulated device of modem `index`, for lifecycle events; nil when not running.
    func device(modem index: Int) -> SimulatedModemDevice?
    /// The number a modem re-enumerated now gets (`SimulatedModemFleet.nextFreeNumber`).
    func nextFreeNumber() -> Int
}

/// What a service gets from the daemon: the scenario, the topology, the run directory's files,
/// the live subscriber directory and the data path. Sendable; any thread.
public struct SimulatorContext: Sendable {
    public let scenario: Scenario
    public let topology: WorldTopology
    public let run: RunDirectory
    /// Which SIM holds which bearer address right now.
    public let subscribers: any SubscriberDirectory
    /// The bearers' data path (a modem simulator opens and closes it on connect/disconnect).
    public let dataPlane: DataPlane

    /// Returns a listening TCP socket bound to `address`:`port` inside `namespace` (for an
    /// HTTP server's `.socket` listener). The caller owns it.
    public func listeningSocket(namespace: String, address: String, port: UInt16) throws -> Int32 {
        let fd = cshims_netns_listen_socket("/run/netns/\(namespace)", address, port)
        guard fd >= 0 else {
            throw CellpathError(
                .unavailable, "cannot listen on \(address):\(port) in \(namespace): \(SystemError.text(errno))")
        }
        return fd
    }

    /// Appends one line to the daemon's log (stderr), prefixed with the world's prefix.
    public func log(_ message: String) { DaemonLog.write("[\(topology.prefix)] \(message)") }
}

/// The daemon's log: stderr, which is the log file of a detached daemon. Any thread.
enum DaemonLog {
    static func write(_ line: String) {
        try? IO.writeAll(2, "\(SimulatorClock.timestamp(WallClock.now)) \(line)\n")
    }
}
