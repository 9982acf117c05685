import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// Several cellpath processes on the same modems at once, as a gateway's timer and a person
/// run them: every check concludes, the bearer they share is taken down by the last of them,
/// and nothing accumulates (addresses, rules, default routes, records). And a signal that
/// reaches a check both directly and through its process group counts once.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ConcurrentChecksEndToEndTests {
    /// Two modems (MBIM and QMI) whose SIMs are both unchanged: every check is verified.
    static var twoVerifiedModems: Scenario {
        var scenario = CheckCommandsEndToEndTests.twoModems
        scenario.modems[1].sim?.msisdn = "+447940448592"
        scenario.modems[1].sim?.simChangedMinutesAgo = nil
        return scenario
    }

    /// Runs `count` copies of `cellpath ARGS…` on the device at once; their statuses and outputs.
    static func concurrently(
        _ count: Int, _ device: SimulatedDevice, _ arguments: [String]
    ) throws -> [(status: Int32?, output: String)] {
        let outputs = (0 ..< count).map { "/tmp/\(device.prefix)concurrent-\($0)" }
        defer { outputs.forEach { unlink($0) } }
        let processes = try outputs.map {
            try BackgroundProcess(
                [CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path] + arguments,
                output: $0,
                environment: [
                    "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
                    "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
                ])
        }
        return zip(processes, outputs).map { process, output in
            let ended = process.wait(timeoutMs: 180_000)
            return (ended ? process.exitStatus : nil, FileSystem.readText(output) ?? "")
        }
    }

    /// What cellpath's bearers leave in the device namespace: addresses on the modems'
    /// interfaces, source rules, default routes through them, and bearer records.
    static func leftovers(_ device: SimulatedDevice) throws -> [String] {
        var found: [String] = []
        for interface in ["wwan0", "wwan1"] {
            let addresses = try device.run(["ip", "addr", "show", "dev", interface, "scope", "global"]).stdout
            if addresses.contains("inet") { found.append("\(interface) addresses: \(addresses)") }
        }
        let rules = try device.run(["ip", "rule"]).stdout.split(separator: "\n").filter { $0.contains("100.64.") }
        if !rules.isEmpty { found.append("rules: \(rules)") }
        let routes = try device.run(["ip", "route", "show", "default"]).stdout.split(separator: "\n").filter {
            $0.contains("wwan")
        }
        if !routes.isEmpty { found.append("default routes: \(routes)") }
        let state = try #require(try device.environment()["CELLPATH_STATE_DIR"])
        let records = try ProcessRunner.run(["ls", "-A", state]).stdout
        if !records.isEmpty { found.append("records: \(records)") }
        return found
    }

    @Test(arguments: [2, 8])
    func concurrentChecksOnOneModemAllConcludeAndLeaveNothing(_ count: Int) throws {
        try SimulatedDevice.with(connect: false) { device in
            let routesBefore = try device.run(["ip", "route", "show", "default"]).stdout
            let results = try Self.concurrently(
                count, device, ["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            for result in results {
                #expect(result.status == 0, "\(result.output)")
                #expect(result.output.contains("\"outcome\": \"verified\""), "\(result.output)")
            }
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try Self.leftovers(device) == [])
            #expect(try device.run(["ip", "route", "show", "default"]).stdout == routesBefore)
        }
    }

    /// Parallel `-m all` runs, again and again: default routes do not pile up.
    @Test func repeatedParallelRunsOnEveryModemDoNotAccumulateRoutes() throws {
        try SimulatedDevice.with(Self.twoVerifiedModems, connect: false) { device in
            let routesBefore = try device.run(["ip", "route", "show", "default"]).stdout
            for _ in 0 ..< 3 {
                let results = try Self.concurrently(3, device, ["subscriber-check", "-m", "all", "--direct", "--json"])
                for result in results { #expect(result.status == 0, "\(result.output)") }
                #expect(try Self.leftovers(device) == [])
                #expect(try device.run(["ip", "route", "show", "default"]).stdout == routesBefore)
            }
        }
    }

    /// `bearer up` while a check uses the bearer the check brought up: the bearer is kept, so the
    /// check leaves it up when it is done; `bearer down` then takes it down.
    @Test func bearerUpDuringACheckKeepsTheBearerAfterIt() throws {
        var scenario = Scenario.builtIn
        scenario.api.slowMs = 3000
        try SimulatedDevice.with(scenario, connect: false) { device in
            let output = "/tmp/\(device.prefix)check"
            defer { unlink(output) }
            let check = try BackgroundProcess(
                [
                    CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path,
                    "subscriber-check", "+447940448591", "-m", "0", "--direct"
                ],
                output: output,
                environment: [
                    "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
                    "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
                ])
            let connected = try Poll.until(timeout: .seconds(5), interval: .milliseconds(50)) {
                try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("inet 100.64.23.10")
            }
            #expect(connected, "the check brought the bearer up")
            let up = try device.cellpath(["bearer", "up", "-m", "0", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            #expect(try JSONValue.parse(up.stdout)["reused"]?.bool == true)
            #expect(check.wait(timeoutMs: 60_000))
            #expect(check.exitStatus == 0, "\(FileSystem.readText(output) ?? "")")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "connected", "kept by bearer up")
            #expect(try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("inet 100.64.23.10"))
            let down = try device.cellpath(["bearer", "down", "-m", "0"])
            #expect(down.status == 0, "\(down.stderr)")
            #expect(try Self.leftovers(device) == [])
        }
    }

    /// `timeout` sends its signal to the command and then to the command's process group, as
    /// a control-group kill or a terminal may: one event, so the check cancels and cleans up
    /// (exit 130, no bearer left) instead of taking the "second Ctrl-C" way out.
    @Test func aSignalToTheCommandAndItsGroupCountsOnce() throws {
        var scenario = Scenario.builtIn
        scenario.api.slowMs = 4000
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try ProcessRunner.run(
                [
                    "timeout", "--preserve-status", "-s", "INT", "2", CellpathBinary.path, "sim", "exec", "--prefix",
                    device.prefix,
                    "--", CellpathBinary.path, "subscriber-check", "+447940448591", "-m", "0", "--direct"
                ],
                environment: [
                    "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
                    "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
                ])
            #expect(result.status == 130, "\(result.stderr)")
            #expect(result.stderr.contains("error: cancelled"), "\(result.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try Self.leftovers(device) == [])
        }
    }
}
