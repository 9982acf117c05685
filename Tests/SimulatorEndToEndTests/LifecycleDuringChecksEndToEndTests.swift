import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// What real modems undergo while cellpath uses them: a reset (with re-enumeration under new
/// names and a new ifindex) during a check, between the runs of a field run, and after
/// `bearer up`. The check fails at once and leaves nothing; the runs go on on the re-enumerated
/// modem; the bearer record follows the modem's physical device.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct LifecycleDuringChecksEndToEndTests {
    /// `cellpath ARGS…` on the device in the background, its output in a file; `body` runs
    /// meanwhile, then the command is awaited (at most `seconds`) and its exit status and output returned.
    private func inBackground(
        _ device: SimulatedDevice, _ arguments: [String], seconds: Int = 60, _ body: (String) throws -> Void
    ) throws -> (status: Int32?, output: String) {
        let output = "/tmp/\(device.prefix)lifecycle-\(getpid()).out"
        unlink(output)
        defer { unlink(output) }
        let process = try BackgroundProcess(
            [CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path] + arguments,
            output: output,
            environment: [
                "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent", "XDG_CONFIG_HOME": "/nonexistent",
                "LANG": "C.UTF-8", "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
            ])
        try body(output)
        let ended = process.wait(timeoutMs: seconds * 1000)
        if !ended { process.stop() }
        return (ended ? process.exitStatus : nil, FileSystem.readText(output) ?? "")
    }

    /// The modem resets (and re-enumerates as cdc-wdm1/wwan1) while the check waits for the
    /// carrier: the check fails at once as interfaceDown (69), not at its hop timeout, and no
    /// address, route or source rule of its bearer stays, of either family.
    @Test func aResetDuringACheckFailsItAtOnceAndLeavesNothing() throws {
        var scenario = Scenario.builtIn
        scenario.modems[0].ipType = .ipv4v6
        scenario.carrier.timeout = true
        try SimulatedDevice.with(scenario, connect: false) { device in
            var resetAt = 0.0
            let (status, output) = try inBackground(
                device,
                ["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"]
            ) { _ in
                let visited = try Poll.until(timeout: .seconds(30), interval: .milliseconds(100)) {
                    try device.requestLog().contains { $0["path"]?.string?.contains("/redirect") == true }
                }
                #expect(visited, "the check never reached the carrier")
                #expect(try device.bearerLeftovers().contains { $0.hasPrefix("rule ") }, "no source rule while up")
                _ = try SimulatedWorld.lifecycle(.reset(renumber: true, slowMs: 0), prefix: device.prefix)
                resetAt = MonotonicClock.now
            }
            let took = MonotonicClock.now - resetAt
            #expect(status == 69, "\(output)")
            #expect(took < 5, "the check ended \(took) s after the reset")
            // The JSON document, from its "{" line to its "}" line (stderr's warnings are in the file too).
            let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
            let start = lines.firstIndex { $0 == "{" } ?? lines.endIndex
            let end = lines[start...].firstIndex { $0 == "}" } ?? lines.endIndex
            let json = start < end ? lines[start ... end].joined(separator: "\n") : ""
            #expect(
                (try? JSONValue.parse(json))?["error"]?["reason"]?.string == "interfaceDown", "\(output)")
            #expect(try device.bearerLeftovers() == [])
            let state = try #require(try device.environment()["CELLPATH_STATE_DIR"])
            #expect(
                (FileSystem.entries(state) ?? []).filter { $0.hasSuffix(".json") } == [],
                "a bearer record stayed: \(FileSystem.entries(state) ?? [])")
        }
    }

    /// A field run whose modem resets between two runs: the next runs bring the bearer up on the
    /// re-enumerated modem (wwan1) and all succeed; nothing stays afterwards.
    @Test func aFieldRunContinuesOnTheReEnumeratedModem() throws {
        try SimulatedDevice.with(connect: false) { device in
            let (status, output) = try inBackground(
                device,
                [
                    "subscriber-check", "+447940448591", "-m", "0", "--direct", "--repeat", "3", "--interval", "4",
                    "--json"
                ]
            ) { output in
                let first = Poll.until(timeout: .seconds(30), interval: .milliseconds(100)) {
                    (FileSystem.readText(output) ?? "").contains(#""run": 1"#)
                }
                #expect(first, "the first run did not end")
                _ = try SimulatedWorld.lifecycle(.reset(renumber: true, slowMs: 0), prefix: device.prefix)
            }
            #expect(status == 0, "\(output)")
            let runs = output.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
                .filter { $0["run"] != nil }
            #expect(runs.count == 3, "\(output)")
            #expect(runs.allSatisfy { $0["outcome"]?.string == "verified" }, "\(output)")
            #expect(try device.status()["modems"]?.array?[0]["interface"]?.string == "wwan1")
            #expect(try device.bearerLeftovers() == [])
        }
    }

    /// A field run through ModemManager while the machine suspends and resumes: ModemManager
    /// removes the modem and probes it again (a new D-Bus object, the bearer lost); the runs
    /// after that bring the bearer up on the re-probed modem and succeed.
    @Test func aFieldRunThroughModemManagerContinuesAfterSuspendAndResume() throws {
        var scenario = Scenario.builtIn
        scenario.modemManager = true
        try SimulatedDevice.with(scenario, connect: false) { device in
            let (_, output) = try inBackground(
                device,
                [
                    "subscriber-check", "+447940448591", "-m", "0", "--direct", "--backend", "modemmanager",
                    "--repeat", "3", "--interval", "60", "--json"
                ],
                seconds: 240
            ) { output in
                let first = Poll.until(timeout: .seconds(60), interval: .milliseconds(100)) {
                    (FileSystem.readText(output) ?? "").contains(#""run": 1"#)
                }
                #expect(first, "the first run did not end")
                _ = try SimulatedWorld.lifecycle(.suspend, prefix: device.prefix)
                _ = try SimulatedWorld.lifecycle(.resume, prefix: device.prefix)
            }
            let runs = output.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
                .filter { $0["run"] != nil }
            #expect(runs.count == 3, "\(output)")
            #expect(runs.first?["outcome"]?.string == "verified", "\(output)")
            #expect(runs.last?["outcome"]?.string == "verified", "\(output)")
            #expect(try device.bearerLeftovers() == [])
        }
    }

    /// `bearer up`, then the modem resets and re-enumerates: the record is found under the
    /// modem's new names (`bearer status` shows wwan1), and `bearer down` removes it and the
    /// source rule the old interface left.
    @Test func aBearerRecordSurvivesTheRename() throws {
        try SimulatedDevice.with(connect: false) { device in
            let up = try device.cellpath(["bearer", "up", "-m", "0", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            _ = try SimulatedWorld.lifecycle(.reset(renumber: true, slowMs: 0), prefix: device.prefix)
            let status = try device.cellpath(["bearer", "status", "-m", "0", "--json"])
            #expect(status.stdout.contains("wwan1") && !status.stdout.contains("wwan0"), "\(status.stdout)")
            let down = try device.cellpath(["bearer", "down", "-m", "0", "--json"])
            #expect(down.status == 0, "\(down.stderr)")
            #expect(try device.bearerLeftovers() == [])
            let state = try #require(try device.environment()["CELLPATH_STATE_DIR"])
            #expect(
                (FileSystem.entries(state) ?? []).filter { $0.hasSuffix(".json") } == [],
                "a bearer record stayed: \(FileSystem.entries(state) ?? [])")
        }
    }
}
