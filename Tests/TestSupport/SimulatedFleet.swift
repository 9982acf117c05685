import CellpathCore
import Glibc
import ModemDiscovery
import SimulatedModems
import SimulatorScenario
import SystemSupport

/// Simulated modems on ptys in a private run directory (removed at the end), and what
/// discovery finds there. No root.
public final class SimulatedFleet {
    public let runDirectory: String
    public let fleet: SimulatedModemFleet
    public let bearerNetwork = StaticBearerNetwork()

    public init(_ modems: [SimulatedModem]) throws {
        runDirectory = try TemporaryDirectory.make("cellpath-modems")
        fleet = SimulatedModemFleet(
            scenario: Scenario(modems: modems), runDirectory: runDirectory, bearerNetwork: bearerNetwork)
        try fleet.start()
    }

    deinit {
        fleet.stop()
        FileSystem.removeTree(runDirectory)
    }

    public var roots: DeviceRoots { DeviceRoots(sysfs: "\(runDirectory)/sys", dev: "\(runDirectory)/dev") }
    public var modems: [DiscoveredModem] { ModemDiscovery(roots: roots).modems() }
    public func device(_ index: Int) -> SimulatedModemDevice { fleet.devices[index] }

    /// The environment that points `cellpath modems` at this fleet.
    public var environment: [String: String] {
        [DeviceRoots.sysfsVariable: roots.sysfs, DeviceRoots.devVariable: roots.dev]
    }

    /// Runs a client of the real libraries against modem `index` (`mbimcli -d PORT ARGS…` or
    /// `qmicli -d PORT --device-open-qmi ARGS…`).
    @discardableResult
    public func client(_ index: Int, _ arguments: String...) throws -> ProcessResult {
        let device = fleet.devices[index]
        guard let port = device.devicePath else { throw CellpathError(.usage, "modem \(index) has no control port") }
        let base =
            device.modem.protocol == .mbim ? ["mbimcli", "-d", port] : ["qmicli", "-d", port, "--device-open-qmi"]
        return try ProcessRunner.run(base + arguments)
    }
}

extension SimulatedModem {
    /// A modem with identities of its own, on a named network.
    public static func test(
        _ protocol: SimulatorScenario.ModemProtocol, _ n: Int, faults: ModemFaults = ModemFaults(),
        sim: SimulatedSIM?? = nil, roaming: Bool = false, ipType: BearerIPType = .ipv4
    ) -> SimulatedModem {
        SimulatedModem(
            protocol: `protocol`, imei: "35000000000000\(n)", manufacturer: "Maker \(n)", model: "Model \(n)",
            firmware: "FW.\(n)",
            sim: sim
                ?? SimulatedSIM(iccid: "894400000000000000\(n)", imsi: "23415000000000\(n)", msisdn: "+44770090000\(n)"),
            network: SimulatedNetwork(mcc: "234", mnc: "15", operatorName: "Test Net", roaming: roaming, rssiDbm: -67),
            ipType: ipType, faults: faults)
    }
}
