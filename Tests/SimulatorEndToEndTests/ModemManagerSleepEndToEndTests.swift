import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// Suspend and resume with the real ModemManager: the world's fake logind emits
/// PrepareForSleep(true) and (false) on the private bus; ModemManager takes logind's delay
/// inhibitor, removes its modems on sleep and probes them again on resume.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ModemManagerSleepEndToEndTests {
    @Test func modemManagerRemovesTheModemOnSuspendAndProbesItAgainOnResume() throws {
        var scenario = Scenario.builtIn
        scenario.modemManager = true
        try SimulatedDevice.with(scenario, connect: false) { device in
            let run = RunDirectory(prefix: device.prefix)
            func listed() throws -> Int {
                let list = try device.run(["mmcli", "-L"])
                let lines = list.stdout.split(separator: "\n")
                return lines.filter { $0.contains("/org/freedesktop/ModemManager1/Modem/") }.count
            }
            func waitFor(_ count: Int, seconds: Double) throws -> Bool {
                for _ in 0 ..< Int(seconds * 5) {
                    if try listed() == count { return true }
                    usleep(200_000)
                }
                return false
            }
            #expect(try listed() == 1)
            #expect(try waitFor(1, seconds: 1))
            let daemonLog = { FileSystem.readText(run.logFile) ?? "" }
            #expect(daemonLog().contains("ModemManager took a delay inhibitor for sleep"), "\(daemonLog())")

            _ = try SimulatedWorld.lifecycle(.suspend, prefix: device.prefix)
            #expect(try waitFor(0, seconds: 20), "ModemManager still lists the modem while asleep")
            #expect(daemonLog().contains("ModemManager released its delay inhibitor"), "\(daemonLog())")

            _ = try SimulatedWorld.lifecycle(.resume, prefix: device.prefix)
            #expect(try waitFor(1, seconds: 90), "ModemManager did not probe the modem again after resume")
            let mmLog = FileSystem.readText("\(run.modemManagerDirectory)/ModemManager.log") ?? ""
            #expect(mmLog.contains("system is about to suspend") && mmLog.contains("system is resuming"))
        }
    }

    @Test func modemManagerFindsTheModemUnderItsNewNamesAfterAReset() throws {
        var scenario = Scenario.builtIn
        scenario.modemManager = true
        try SimulatedDevice.with(scenario, connect: false) { device in
            func primaryPorts() throws -> [String] {
                let list = try device.run(["mmcli", "-L"]).stdout
                return try list.split(whereSeparator: { $0 == " " || $0 == "\n" }).filter { $0.contains("/Modem/") }
                    .map { try device.run(["mmcli", "-m", String($0)]).stdout }
                    .compactMap { $0.split(separator: "\n").first { $0.contains("primary port:") } }
                    .map { String($0.split(separator: " ").last ?? "") }
            }
            #expect(try primaryPorts() == ["cdc-wdm0"])
            _ = try SimulatedWorld.lifecycle(.reset(renumber: true), prefix: device.prefix)
            var ports: [String] = []
            for _ in 0 ..< 150 where ports != ["cdc-wdm1"] {
                usleep(200_000)
                ports = try primaryPorts()
            }
            #expect(ports == ["cdc-wdm1"])
        }
    }

    @Test func modemManagerReprobesTheModemAfterASIMHotSwap() throws {
        var scenario = Scenario.builtIn
        scenario.modemManager = true
        try SimulatedDevice.with(scenario, connect: false) { device in
            func simOfTheModem() throws -> String {
                func words(_ text: String) -> [Substring] { text.split(whereSeparator: { $0 == " " || $0 == "\n" }) }
                let list = try device.run(["mmcli", "-L"]).stdout
                guard let modem = words(list).first(where: { $0.contains("/Modem/") }) else { return "" }
                let shown = try device.run(["mmcli", "-m", String(modem)]).stdout
                guard let sim = words(shown).first(where: { $0.contains("/SIM/") }) else { return "" }
                return try device.run(["mmcli", "-i", String(sim)]).stdout
            }
            #expect(try simOfTheModem().contains(SimulatedSIM().iccid))
            let new = SIMIdentity(iccid: "8900101234567890997", imsi: "001010999999999", msisdn: "+447700900999")
            _ = try SimulatedWorld.lifecycle(.swapSIM(new), prefix: device.prefix)
            var sim = ""
            for _ in 0 ..< 100 where !sim.contains(new.iccid) {
                usleep(200_000)
                sim = try simOfTheModem()
            }
            #expect(sim.contains(new.iccid) && sim.contains(new.imsi), "\(sim)")
            let directory = RunDirectory(prefix: device.prefix).modemManagerDirectory
            let log = FileSystem.readText("\(directory)/ModemManager.log") ?? ""
            #expect(log.contains("SIM hot swap detected"))
        }
    }
}
