import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport

/// A simulated modem on a pty in a private run directory, removed when the test ends.
final class ModemHarness {
    let runDirectory: String
    let device: SimulatedModemDevice
    let bearerNetwork: StaticBearerNetwork

    init(_ modem: SimulatedModem, index: Int = 0, bearerNetwork: StaticBearerNetwork = StaticBearerNetwork()) throws {
        runDirectory = try TemporaryDirectory.make("cellpath-modem")
        self.bearerNetwork = bearerNetwork
        device = SimulatedModemDevice(
            modem: modem, index: index, runDirectory: runDirectory, bearerNetwork: bearerNetwork)
        try device.start()
    }

    deinit {
        device.stop()
        FileSystem.removeTree(runDirectory)
    }

    var path: String { device.devicePath ?? "" }

    /// Runs mbimcli against the device.
    func mbimcli(_ arguments: String...) throws -> ProcessResult {
        try ProcessRunner.run(["mbimcli", "-d", path] + arguments)
    }

    /// Runs qmicli against the device in QMI mode.
    func qmicli(_ arguments: String...) throws -> ProcessResult {
        try ProcessRunner.run(["qmicli", "-d", path, "--device-open-qmi"] + arguments)
    }
}

/// The value printed on the line `label: 'value'` (or `label: value`) in a qmicli/mbimcli
/// output, if any.
func field(_ label: String, in output: String) -> String? {
    for line in output.split(separator: "\n") {
        let trimmed = line.trimmingPrefix(while: { $0 == " " || $0 == "\t" })
        guard trimmed.hasPrefix(label + ":") else { continue }
        let rest = trimmed.dropFirst(label.count + 1)
        guard let open = rest.firstIndex(of: "'"), let close = rest.lastIndex(of: "'"), open < close else {
            return String(rest.trimmingPrefix(while: { $0 == " " }))
        }
        return String(rest[rest.index(after: open) ..< close])
    }
    return nil
}
