import CellpathCore
import Glibc
import ModemDiscovery
import Modems
import SimulatedModems
import SimulatorScenario
import Synchronization
import TestSupport

/// Simulated modems on ptys in a private run directory (removed at the end), and what
/// discovery finds there. No root.
final class SimulatedFleet {
    let runDirectory: String
    let fleet: SimulatedModemFleet
    let bearerNetwork = StaticBearerNetwork()

    init(_ modems: [SimulatedModem]) throws {
        var template = Array("/tmp/cellpath-modems-XXXXXX".utf8CString)
        guard let dir = mkdtemp(&template) else { throw CellpathError(.unavailable, "mkdtemp failed") }
        runDirectory = String(cString: dir)
        fleet = SimulatedModemFleet(scenario: Scenario(modems: modems), runDirectory: runDirectory, bearerNetwork: bearerNetwork)
        try fleet.start()
    }

    deinit {
        fleet.stop()
        _ = try? ProcessRunner.run(["rm", "-rf", runDirectory])
    }

    var roots: DeviceRoots { DeviceRoots(sysfs: "\(runDirectory)/sys", dev: "\(runDirectory)/dev") }
    var modems: [DiscoveredModem] { ModemDiscovery(roots: roots).modems() }
    func device(_ index: Int) -> SimulatedModemDevice { fleet.devices[index] }

    /// The environment that points `cellpath modems` at this fleet.
    var environment: [String: String] {
        [DeviceRoots.sysfsVariable: roots.sysfs, DeviceRoots.devVariable: roots.dev]
    }

    /// Reads modem `index` directly (no proxy) within `timeout`.
    func status(_ index: Int, timeout: Duration = .seconds(10), logger: Logger = .silent) async throws(ModemError) -> ModemStatus {
        try await ModemStatusReader(access: ModemAccess(useProxy: false, timeout: timeout), logger: logger).status(of: modems[index])
    }

    /// Runs a client of the real libraries against modem `index` (`mbimcli -d PORT ARGS…` or
    /// `qmicli -d PORT --device-open-qmi ARGS…`).
    @discardableResult
    func client(_ index: Int, _ arguments: String...) throws -> ProcessResult {
        let device = fleet.devices[index]
        let base = device.modem.protocol == .mbim ? ["mbimcli", "-d", device.devicePath] : ["qmicli", "-d", device.devicePath, "--device-open-qmi"]
        return try ProcessRunner.run(base + arguments)
    }
}

/// Collects log lines, for tests that check what was logged.
final class LogLines: LogSink {
    private let lines = Mutex<[String]>([])

    func write(line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }

    /// A logger at `threshold` writing here.
    func logger(_ threshold: LogLevel = .debug) -> Logger { Logger(threshold: threshold, sink: self) }
}

extension SimulatedModem {
    /// A modem with identities of its own, on a named network.
    static func test(_ protocol: SimulatorScenario.ModemProtocol, _ n: Int, faults: ModemFaults = ModemFaults(),
                     sim: SimulatedSIM?? = nil, roaming: Bool = false) -> SimulatedModem {
        SimulatedModem(protocol: `protocol`, imei: "35000000000000\(n)", manufacturer: "Maker \(n)", model: "Model \(n)",
                       firmware: "FW.\(n)",
                       sim: sim ?? SimulatedSIM(iccid: "894400000000000000\(n)", imsi: "23415000000000\(n)", msisdn: "+44770090000\(n)"),
                       network: SimulatedNetwork(mcc: "234", mnc: "15", operatorName: "Test Net", roaming: roaming, rssiDbm: -67),
                       faults: faults)
    }
}
