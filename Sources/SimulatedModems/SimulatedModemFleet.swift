import CellpathCore
import SimulatorScenario

/// All the modems of a scenario, each on its own pty and thread: modem `i` is
/// `<run dir>/dev/cdc-wdm<i>` with network interface `wwan<i>`, or has the names of its device
/// profile (`wwan<i>mbim0`, `mhi_hwip<i>`…). Thread-safe.
public final class SimulatedModemFleet: Sendable {
    public let devices: [SimulatedModemDevice]

    /// Creates (without starting) one device per scenario modem, all sharing `bearerNetwork`.
    public init(scenario: Scenario, runDirectory: String, bearerNetwork: any BearerNetwork) {
        // A modem without an MBIM or QMI port (router mode, the L850) still has its sysfs and ports.
        devices = scenario.modems.enumerated().map { index, modem in
            SimulatedModemDevice(modem: modem, index: index, runDirectory: runDirectory, bearerNetwork: bearerNetwork)
        }
    }

    /// Starts every device; if one fails, those already started are stopped again.
    public func start() throws(CellpathError) {
        for (i, device) in devices.enumerated() {
            do {
                try device.start()
            } catch {
                for started in devices[..<i] { started.stop() }
                throw error
            }
        }
    }

    /// Stops every device (bearers down, ptys closed, device links and sysfs entries removed).
    public func stop() {
        for device in devices { device.stop() }
    }

    /// The number a modem re-enumerated now gets while its old names are still held (the kernel's
    /// next free index): the lowest that no modem of the fleet uses, its own old one included.
    public func nextFreeNumber() -> Int {
        let used = Set(devices.map { $0.kernelNames.number })
        var number = 0
        while used.contains(number) { number += 1 }
        return number
    }

    /// The device whose control port is `name` (`cdc-wdm0`, `wwan6mbim0`…), if any.
    public func device(controlPort name: String) -> SimulatedModemDevice? {
        devices.first { $0.controlPortName == name }
    }
}
