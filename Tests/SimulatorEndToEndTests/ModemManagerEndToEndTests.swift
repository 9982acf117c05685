import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// The real ModemManager on the simulated modems (scenario `modemManager`): it lists the MBIM
/// and the QMI modem, connects a bearer through the simulated MBIM modem, and `sim down`
/// stops it with its bus and polkitd.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ModemManagerEndToEndTests {
    @Test func modemManagerListsAndConnectsTheSimulatedModems() throws {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0), SimulatedModem(index: 1)]
        scenario.modems[1].protocol = .qmi
        scenario.modemManager = true
        var pids: [Int32] = []
        try SimulatedDevice.with(scenario, connect: false) { device in
            let run = RunDirectory(prefix: device.prefix)
            pids = ["dbus-daemon", "polkitd", "ModemManager"].compactMap { name in
                Self.text("\(run.modemManagerDirectory)/\(name).pid").flatMap {
                    Int32($0.split(separator: "\n").first ?? "")
                }
            }
            #expect(pids.count == 3)
            #expect(try device.environment()["DBUS_SYSTEM_BUS_ADDRESS"] == run.busAddress)

            let list = try device.run(["mmcli", "-L"])
            #expect(list.status == 0, "\(list.stderr)")
            let modems = list.stdout.split(separator: "\n").compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("/org/freedesktop/ModemManager1/Modem/") }.map(
                    String.init)
            }
            #expect(modems.count == 2, "\(list.stdout)")

            // The MBIM modem is the one whose primary port is cdc-wdm0.
            let mbim = try #require(
                try modems.first { path in
                    let shown = try device.run(["mmcli", "-m", path])
                    return shown.stdout.contains("primary port: cdc-wdm0")
                }, "\(list.stdout)")
            let connect = try device.run(["mmcli", "-m", mbim, "--simple-connect=apn=internet"])
            #expect(connect.status == 0, "\(connect.stdout) \(connect.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "connected")
            #expect(try device.status()["modems"]?.array?[1]["bearer"]?.string == "disconnected")
        }
        // `SimulatedDevice.with` ran `sim down`.
        #expect(
            !pids.isEmpty && pids.allSatisfy { (Self.text("/proc/\($0)/cmdline") ?? "").isEmpty },
            "still running: \(pids)")
    }

    /// A file's text, or nil when it cannot be read.
    private static func text(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
