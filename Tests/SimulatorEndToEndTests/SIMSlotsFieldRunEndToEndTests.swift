import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// `--sim-slot all -m all` in field runs: every SIM of every modem checked in one run, each with
/// its own bearer, number, verdicts and operator (two SIMs of one modem on two operators); a slot without a usable SIM said skipped; each
/// modem switched back to the slot it was on, at the end and on Ctrl-C; nothing left behind.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct SIMSlotsFieldRunEndToEndTests {
    /// Modem 0: a SIM in each slot (the second SIM's number its own), slot 1's on operator 001-01,
    /// slot 2's on 001-03; modem 1: a SIM in slot 1 on operator 001-02 and an eSIM without a
    /// profile in slot 2.
    static var fleet: Scenario {
        var scenario = SIMSlotsEndToEndTests.twoSIMs
        scenario.modems[0].secondSlot?.network = SimulatedNetwork(mnc: "03", operatorName: "cellpath sim three")
        scenario.modems.append(SimulatedModem(index: 1))
        scenario.modems[1].device = .dualSIM
        scenario.modems[1].secondSlot = SecondSIMSlot(esim: true, sim: nil)
        scenario.modems[1].network = SimulatedNetwork(mnc: "02", operatorName: "cellpath sim two")
        return scenario
    }

    /// Every JSON line of `output`.
    static func lines(_ output: String) throws -> [JSONValue] {
        try output.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }

    /// No bearer up, nothing of one on the device, no bearer record in the state directory.
    static func expectNothingLeft(_ device: SimulatedDevice, modems: Int) throws {
        for modem in 0 ..< modems {
            #expect(try device.status()["modems"]?.array?[modem]["bearer"]?.string == "disconnected")
        }
        #expect(try device.bearerLeftovers() == [])
        let state = try #require(try device.environment()["CELLPATH_STATE_DIR"])
        let records = try device.run(["ls", "-A", state]).stdout.split(separator: "\n").filter {
            $0.hasPrefix("bearer-")
        }
        #expect(records.isEmpty, "\(records)")
    }

    @Test func everySIMOfEveryModemIsCheckedAndEachModemSwitchedBack() throws {
        try SimulatedDevice.with(Self.fleet, connect: false) { device in
            let result = try device.cellpath([
                "subscriber-check", "-m", "all", "--sim-slot", "all", "--repeat", "2", "--direct", "--json"
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = try Self.lines(result.stdout)
            let runs = lines.filter { $0["run"] != nil }
            func lane(_ line: JSONValue) -> String { "\(line["modem"]?.int ?? -1)/\(line["slot"]?.int ?? -1)" }
            #expect(runs.map(lane).sorted() == ["0/1", "0/1", "0/2", "0/2", "1/1", "1/1"], "\(result.stdout)")
            #expect(runs.allSatisfy { $0["outcome"]?.string == "verified" }, "\(result.stdout)")
            // Each SIM checked its own number: the masked numbers end as the SIMs' do.
            let slot2 = runs.filter { lane($0) == "0/2" }.compactMap { $0["phone_number"]?.string }
            #expect(slot2.count == 2 && slot2.allSatisfy { $0.hasSuffix("97") }, "\(slot2)")
            let slot1 = runs.filter { lane($0) == "0/1" }.compactMap { $0["phone_number"]?.string }
            #expect(slot1.count == 2 && slot1.allSatisfy { !$0.hasSuffix("97") }, "\(slot1)")
            #expect(runs.filter { $0["modem"]?.int == 1 }.allSatisfy { $0["radio"]?["operator"]?.string == "001-02" })
            #expect(runs.filter { lane($0) == "0/1" }.allSatisfy { $0["radio"]?["operator"]?.string == "001-01" })
            #expect(runs.filter { lane($0) == "0/2" }.allSatisfy { $0["radio"]?["operator"]?.string == "001-03" })

            let skipped = lines.filter { $0["skipped"] != nil && $0["run"] == nil && $0["product"] == nil }
            #expect(skipped.count == 1, "\(result.stdout)")
            #expect(lane(skipped[0]) == "1/2")
            #expect(skipped[0]["skipped"]?.string == "the eSIM in slot 2 has no enabled profile")

            let summary = try #require(lines.last)
            #expect(
                Set(summary.objectKeys).subtracting(["warnings"])
                    == (try CheckCommandsEndToEndTests.documentedKeys("`cellpath subscriber-check`", table: 1)))
            let sims = try #require(summary["sims"]?.array, "\(result.stdout)")
            #expect(sims.map(lane) == ["0/1", "0/2", "1/1", "1/2"])
            #expect(sims.map { $0["operator"]?.string ?? "-" } == ["001-01", "001-03", "001-02", "-"])
            #expect(sims.map { $0["verified"]?.int ?? -1 } == [2, 2, 2, 0])

            #expect(try SIMSlotsEndToEndTests.slots(device, modem: 0) == ["1 sim active", "2 sim"])
            #expect(try SIMSlotsEndToEndTests.slots(device, modem: 1) == ["1 sim active", "2 esim-without-profile"])
            try Self.expectNothingLeft(device, modems: 2)
        }
    }

    /// Modem 0 on slot 2 at the start: Ctrl-C while slot 1's runs go on (exit 130) switches it
    /// back to slot 2, and nothing is left behind.
    @Test func ctrlCMidRunSwitchesBack() throws {
        var scenario = SIMSlotsEndToEndTests.twoSIMs
        scenario.modems[0].activeSlot = 2
        try SimulatedDevice.with(scenario, connect: false) { device in
            #expect(try SIMSlotsEndToEndTests.slots(device) == ["1 sim", "2 sim active"])
            let stopped = try ProcessRunner.run(
                [CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path]
                    + [
                        "subscriber-check", "-m", "0", "--sim-slot", "all", "--repeat", "8", "--interval", "1",
                        "--direct", "--json"
                    ],
                environment: [
                    "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
                    "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
                ],
                signals: [(after: 4, signal: SIGINT)])
            #expect(stopped.status == 130, "\(stopped.stderr)")
            let runs = try Self.lines(stopped.stdout).filter { $0["run"] != nil }
            #expect(!runs.isEmpty && runs.allSatisfy { $0["slot"]?.int == 1 }, "\(stopped.stdout)")
            #expect(try SIMSlotsEndToEndTests.slots(device) == ["1 sim", "2 sim active"], "\(stopped.stderr)")
            try Self.expectNothingLeft(device, modems: 1)
        }
    }

    @Test func bearerUpAndFetchRefuseAll() throws {
        try SimulatedDevice.with(SIMSlotsEndToEndTests.twoSIMs, connect: false) { device in
            for command in [["bearer", "up"], ["fetch", "-m", "0", "http://mno.carrier.test/"]] {
                let refused = try device.cellpath(command + ["--sim-slot", "all"])
                #expect(refused.status == 64, "\(command): \(refused.stderr)")
                #expect(refused.stderr.contains("'--sim-slot all' walks every SIM in the checks"), "\(refused.stderr)")
            }
            #expect(try SIMSlotsEndToEndTests.slots(device) == ["1 sim active", "2 sim"])
        }
    }
}
