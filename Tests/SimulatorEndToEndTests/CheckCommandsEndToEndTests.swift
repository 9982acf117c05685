import CellpathCore
import FoundationEssentials
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// The check commands in the simulated world (`--direct`: the fake tru.ID API): the verdicts
/// and their exit codes, the check_url chain through the bearer only, the bearer taken down
/// after the run, and every failure leaving no bearer behind.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct CheckCommandsEndToEndTests {
    /// Two modems: the MBIM one's SIM unchanged, the QMI one's swapped 30 minutes ago.
    static var twoModems: Scenario {
        var scenario = Scenario.builtIn
        var swapped = scenario.modems[0]
        scenario.modems[0].sim?.msisdn = "+447940448591"
        swapped.protocol = .qmi
        swapped.sim?.msisdn = "+447940448593"
        swapped.sim?.simChangedMinutesAgo = 30
        swapped.imei = "351234567890132"
        swapped.sim?.iccid = "8900101234567890138"
        swapped.sim?.imsi = "001010123456780"
        scenario.modems.append(swapped)
        return scenario
    }

    @Test func theThreeVerdictsOfASubscriberCheckAndTheirExitCodes() throws {
        try SimulatedDevice.with(Self.twoModems, connect: false) { device in
            let logMark = try device.requestLog().count
            let verified = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            #expect(verified.status == 0, "\(verified.stderr)")
            let json = try JSONValue.parse(verified.stdout)
            #expect(json["outcome"]?.string == "verified")
            #expect(json["match"] == .bool(true))
            #expect(json["no_sim_change"] == .bool(true))
            #expect(json["phone_number"]?.string == "+••••91", "the number is masked without --verbose-full")
            #expect(json["path"]?["interface"]?.string == "wwan0")
            #expect(json["operator_sent"]?.string == "001-01")
            #expect(
                json["steps"]?.array?.compactMap { $0["step"]?.string }.sorted() == [
                    "check_url", "complete", "create", "path"
                ])
            #expect(
                json["check_url"]?["hops"]?.array?.allSatisfy { $0["local_address"]?.string == "100.64.23.10" } == true)
            // The check_url chain came from the bearer; the backend calls (token, create, PATCH) from Wi-Fi.
            let log = try Array(device.requestLog().dropFirst(logMark))
            let fromBearer = log.filter { $0["source"]?.string == "100.64.23.10" }
            #expect(fromBearer.count == 3, "\(log)")
            // The backend leg goes over Wi-Fi, which has both families (IPv6 preferred).
            #expect(
                log.contains {
                    $0["method"]?.string == "PATCH"
                        && ["192.0.2.23", "2001:db8:2::23"].contains($0["source"]?.string ?? "")
                },
                "\(log)")
            // The bearer this run brought up is down again.
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try device.run(["ip", "rule"]).stdout.contains("100.64.23.10") == false)

            let other = try device.cellpath(["subscriber-check", "+447940448592", "-m", "0", "--direct", "--json"])
            #expect(other.status == 1, "\(other.stderr)")
            #expect(try JSONValue.parse(other.stdout)["outcome"]?.string == "not_verified")

            let swapped = try device.cellpath(["subscriber-check", "+447940448593", "-m", "1", "--direct", "--json"])
            #expect(swapped.status == 2, "\(swapped.stderr)")
            #expect(
                !swapped.stderr.contains("dropped the bearer"),
                "taking our own bearer down is no drop: \(swapped.stderr)")
            let swappedJSON = try JSONValue.parse(swapped.stdout)
            #expect(swappedJSON["outcome"]?.string == "sim_changed")
            #expect(swappedJSON["path"]?["interface"]?.string == "wwan1")
            #expect(swappedJSON["sim_change_within"] == .int(60))
        }
    }

    /// `--modem all` without a number: each modem checks the number its own SIM holds, in
    /// parallel, each on its own bearer; one JSON line per run and a summary line; the exit code
    /// is the worst verdict (2: one SIM changed), and the metrics name each modem.
    @Test func everyModemChecksItsOwnNumber() throws {
        try SimulatedDevice.with(Self.twoModems, connect: false) { device in
            let metrics = "/tmp/\(device.prefix)modems.prom"
            defer { unlink(metrics) }
            let result = try device.cellpath([
                "subscriber-check", "-m", "all", "--direct", "--json", "--metrics-file", metrics
            ])
            #expect(result.status == 2, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "two runs and the summary, a JSON value each: \(result.stdout)")
            let runs = try lines.prefix(2).map { try JSONValue.parse($0) }.sorted {
                ($0["modem"]?.int ?? 0) < ($1["modem"]?.int ?? 0)
            }
            #expect(runs.map { $0["modem"] } == [.int(0), .int(1)])
            #expect(runs.map { $0["outcome"]?.string } == ["verified", "sim_changed"])
            #expect(runs.map { $0["path"]?["interface"]?.string } == ["wwan0", "wwan1"])
            let summary = try JSONValue.parse(try #require(lines.last))
            #expect(summary["runs"] == .int(2))
            #expect(summary["outcomes"]?["sim_changed"] == .int(1))
            let text = String(decoding: try FileSystem.read(metrics, limit: 1 << 20), as: UTF8.self)
            #expect(
                text.contains(
                    "cellpath_check_runs{product=\"subscriber_check\",modem=\"1\",outcome=\"sim_changed\"} 1"),
                "\(text)")
            #expect(
                text.contains(
                    "cellpath_check_runs{product=\"subscriber_check\",modem=\"0\",outcome=\"sim_changed\"} 0"),
                "\(text)")
            #expect(
                try device.status()["modems"]?.array?.map { $0["bearer"]?.string } == ["disconnected", "disconnected"])

            let oneChanged = try device.cellpath(["subscriber-check", "-m", "all", "--direct", "-q"])
            #expect(oneChanged.status == 2, "\(oneChanged.stderr)")
            #expect(
                oneChanged.stdout.split(separator: "\n").count == 1, "-q: the summary line alone: \(oneChanged.stdout)")
        }
    }

    /// A national number with no region configured is read in the region of the SIM's own number.
    @Test func aNationalNumberTakesTheSIMsRegion() throws {
        try SimulatedDevice.with(connect: false) { device in
            let result = try device.cellpath(["subscriber-check", "07940 448591", "-m", "0", "--direct", "--json", "-v"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("in GB, the region of modem 0's SIM"), "\(result.stderr)")
            let noModem = try device.cellpath([
                "subscriber-check", "07940 448591", "--direct", "--interface", "wwan0", "--dns", "100.64.0.53"
            ])
            #expect(noModem.status == 65, "without a modem there is no SIM to take the region from: \(noModem.stderr)")
        }
    }

    @Test func phoneCheckV01SimCheckAndCoverage() throws {
        try SimulatedDevice.with(Self.twoModems, connect: false) { device in
            let phone = try device.cellpath([
                "phone-check", "+447940448591", "-m", "0", "--direct", "--api-version", "v0.1", "--json"
            ])
            #expect(phone.status == 0, "\(phone.stderr)")
            #expect(try JSONValue.parse(phone.stdout)["match"] == .bool(true))
            #expect(try JSONValue.parse(phone.stdout)["api_version"]?.string == "v0.1")

            let unchanged = try device.cellpath(["sim-check", "+447940448591", "--direct", "--json"])
            #expect(unchanged.status == 0, "\(unchanged.stderr)")
            let changed = try device.cellpath(["sim-check", "+447940448593", "--direct", "--json"])
            #expect(changed.status == 2, "\(changed.stderr)")
            #expect(try JSONValue.parse(changed.stdout)["no_sim_change"] == .bool(false))

            let coverage = try device.cellpath(["coverage", "-m", "0", "--direct", "--json"])
            #expect(coverage.status == 0, "\(coverage.stderr)")
            let answer = try JSONValue.parse(coverage.stdout)
            #expect(answer["network_id"]?.string == "00101")
            #expect(answer["products"]?.array?.count == 3)
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
        }
    }

    /// Through Wi-Fi the API refuses the check_url (412 not_mobile_ip, exit 69).
    @Test func wifiIsRefused() throws {
        try SimulatedDevice.with(connect: false) { device in
            let refused = try device.cellpath([
                "subscriber-check", "+447940448591", "--direct", "--interface", "wlan0", "--dns", "192.0.2.1"
            ])
            #expect(refused.status == 64, "\(refused.stderr)")
            let forced = try device.cellpath([
                "subscriber-check", "+447940448591", "--direct", "--interface", "wlan0", "--dns", "192.0.2.1",
                "--allow-any-interface", "--json"
            ])
            #expect(forced.status == 69, "\(forced.stderr)")
            #expect(try JSONValue.parse(forced.stdout)["error"]?["reason"]?.string == "notMobileIP")
        }
    }

    /// The API fails the create call (503, retried, then 75): the bearer that came up meanwhile
    /// is taken down.
    @Test func aFailedCreateStillTakesTheBearerDown() throws {
        var scenario = Scenario.builtIn
        scenario.api.serverErrorStatus = 503
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            #expect(result.status == 75, "\(result.stderr)")
            #expect(try JSONValue.parse(result.stdout)["error"]?["kind"]?.string == "temporary")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("inet ") == false)
        }
    }

    /// Ctrl-C while the check waits for a slow API: exit 130, no bearer, no address, no rule.
    @Test func ctrlCLeavesNoBearerBehind() throws {
        var scenario = Scenario.builtIn
        scenario.api.slowMs = 4000
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try ProcessRunner.run(
                [
                    CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path,
                    "subscriber-check", "+447940448591", "-m", "0", "--direct"
                ],
                environment: [
                    "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
                    "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
                ],
                signals: [(after: 2.0, signal: SIGINT)])
            #expect(result.status == 130, "\(result.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("inet ") == false)
            #expect(try device.run(["ip", "rule"]).stdout.contains("100.64.23.10") == false)
        }
    }

    /// Field mode: one JSON line per run, a summary, a Prometheus file; one bearer for all runs.
    @Test func fieldModeWritesLinesASummaryAndMetrics() throws {
        try SimulatedDevice.with(connect: false) { device in
            let metrics = "/tmp/\(device.prefix)metrics.prom"
            defer { unlink(metrics) }
            let result = try device.cellpath([
                "subscriber-check", "+447940448591", "-m", "0", "--direct", "--repeat", "3",
                "--interval", "0", "--metrics-file", metrics, "--json"
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 4, "JSON Lines: three runs and the summary: \(result.stdout)")
            let runs = try lines.prefix(3).map { try JSONValue.parse($0) }
            #expect(runs.map { $0["run"] } == [.int(1), .int(2), .int(3)])
            #expect(runs.allSatisfy { $0["outcome"]?.string == "verified" })
            let summary = try JSONValue.parse(try #require(lines.last))
            #expect(summary["runs"] == .int(3))
            #expect(summary["outcomes"]?["verified"] == .int(3))
            #expect(summary["steps"]?["check_url"]?["p50_ms"] != nil)
            let text = String(decoding: try FileSystem.read(metrics, limit: 1 << 20), as: UTF8.self)
            #expect(
                text.contains("cellpath_check_runs{product=\"subscriber_check\",outcome=\"verified\"} 3"), "\(text)")
            // Seconds to the microsecond at most: no binary floating-point noise.
            let seconds = text.split(separator: "\n").filter { $0.hasPrefix("cellpath_check_step_seconds") }.compactMap
            { $0.split(separator: " ").last }
            #expect(
                !seconds.isEmpty
                    && seconds.allSatisfy { ($0.split(separator: ".").dropFirst().first?.count ?? 0) <= 6 }, "\(text)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
        }
    }

    /// Human output: the verdict's line is the result on stdout; what led to it (the path, the
    /// hops, the steps) is on stderr, and `-q` leaves the result line alone.
    @Test func resultsGoToStdoutAndDetailsToStderr() throws {
        try SimulatedDevice.with(Self.twoModems, connect: false) { device in
            let normal = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct"])
            #expect(normal.status == 0, "\(normal.stderr)")
            #expect(
                normal.stdout == "+••••91: verified: the number is this SIM's, and the SIM did not change recently\n",
                "\(normal.stdout)")
            for detail in [
                "[subscriber-check] cellular path: wwan0", "[hop 1] GET https://api.truid.test/", "[fetch] check_id=",
                "[subscriber-check] steps: "
            ] {
                #expect(normal.stderr.contains(detail), "\(detail) missing: \(normal.stderr)")
            }
            let quiet = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "-q"])
            #expect(
                quiet.status == 0 && quiet.stdout == normal.stdout && quiet.stderr == "",
                "\(quiet.stdout)\(quiet.stderr)")

            for command in [
                ["sim-check", "+447940448593", "--direct"], ["coverage", "-m", "0", "--direct"],
                ["bearer", "up", "-m", "1"], ["bearer", "status", "-m", "1"]
            ] {
                let full = try device.cellpath(command)
                let quiet = try device.cellpath(command + ["-q"])
                #expect(quiet.status == full.status, "\(command): \(quiet.stderr)")
                #expect(quiet.stdout.split(separator: "\n").count == 1, "\(command): \(quiet.stdout)")
                // The second `bearer up` reuses the bearer the first brought up: another title.
                #expect(command[1] == "up" || full.stdout.hasPrefix(quiet.stdout), "\(command): \(quiet.stdout)")
                #expect(
                    full.stdout.split(separator: "\n").count + full.stderr.split(separator: "\n").count > 1,
                    "\(command): \(full.stdout)")
                #expect(quiet.stderr == "", "\(command): \(quiet.stderr)")
            }
            #expect(
                try device.cellpath(["sim-check", "+447940448593", "--direct"]).stdout
                    == "+••••93: the SIM CHANGED within the period\n")
            _ = try device.cellpath(["bearer", "down", "-m", "1"])
        }
    }

    /// A chain that comes back to the API over plain http (carrying the v0.2 code) is refused by
    /// default (65, `downgradeRefused`); `--allow-downgrade` lets the check conclude, with a
    /// warning that `-q` does not hide.
    @Test func aDowngradeIsRefusedUnlessAllowedAndThenWarned() throws {
        var scenario = Scenario.builtIn
        scenario.carrier.httpsDowngrade = true
        try SimulatedDevice.with(scenario, connect: false) { device in
            let refused = try device.cellpath(["subscriber-check", "+447940448591", "--direct", "--json"])
            #expect(refused.status == 65, "\(refused.stderr)")
            let error = try JSONValue.parse(refused.stdout)["error"]
            #expect(error?["reason"]?.string == "downgradeRefused", "\(refused.stdout)")
            #expect(error?["hint"]?.string?.contains("--allow-downgrade") == true, "\(refused.stdout)")
            #expect(refused.stderr.contains("refused a downgrade to plain http"), "\(refused.stderr)")

            let allowed = try device.cellpath([
                "subscriber-check", "+447940448591", "--direct", "--allow-downgrade", "-q"
            ])
            #expect(allowed.status == 0, "\(allowed.stderr)")
            #expect(allowed.stdout.contains("verified"), "\(allowed.stdout)")
            #expect(
                allowed.stderr.contains("warning: hop ")
                    && allowed.stderr.contains("downgraded to plain http (http://api.truid.test/"),
                "\(allowed.stderr)")
            #expect(
                !allowed.stderr.contains("code=") || allowed.stderr.contains("code=[redacted]"), "\(allowed.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")

            // fetch without --strict lets the downgrade through, and says so even with -q.
            try device.bearer(connect: true)
            let check = try device.createCheck("subscriber_check/v0.2", token: try device.token("subscriber_check"))
            let fetched = try device.cellpath(["fetch", "--interface", "wwan0", "--dns", "100.64.0.53", "-q", check.url]
            )
            #expect(fetched.status == 0, "\(fetched.stderr)")
            #expect(
                fetched.stderr.contains("warning: hop ") && fetched.stderr.contains("(without --strict)"),
                "\(fetched.stderr)")
        }
    }

    /// `--server`: the same checks against `cellpath serve` (the dev-server contract), v0.1 and
    /// v0.2, running in the device namespace with the world's credentials.
    @Test func theChecksAgainstCellpathServe() throws {
        try SimulatedDevice.with(connect: false) { device in
            let log = "/tmp/\(device.prefix)serve.log"
            defer { unlink(log) }
            var environment = SimulatedDevice.path
            for (name, value) in try device.environment() { environment[name] = value }
            environment["HOME"] = "/nonexistent"
            let serve = try BackgroundProcess(
                [
                    "ip", "netns", "exec", device.ue, CellpathBinary.path, "serve", "--listen", "127.0.0.1:8080",
                    "--coverage-token-route"
                ],
                output: log, environment: environment)
            defer { serve.stop() }
            let listening = Poll.until(timeout: .seconds(10)) {
                (try? FileSystem.read(log, limit: 1 << 16)).map { String(decoding: $0, as: UTF8.self) }?
                    .contains("listening") ?? false
            }
            try #require(listening, "serve did not start")
            let server = ["--server", "http://127.0.0.1:8080"]
            for version in ["v0.1", "v0.2"] {
                let verified = try device.cellpath(
                    ["subscriber-check", "+447940448591", "--api-version", version, "--json"] + server)
                #expect(verified.status == 0, "\(version): \(verified.stderr)")
                let json = try JSONValue.parse(verified.stdout)
                #expect(json["backend"]?.string == "server http://127.0.0.1:8080")
                #expect(json["match"] == .bool(true) && json["no_sim_change"] == .bool(true), "\(json)")
            }
            let other = try device.cellpath(["phone-check", "+447940448592"] + server)
            #expect(other.status == 1, "\(other.stderr)")
            let simCheck = try device.cellpath(["sim-check", "+447940448591"] + server)
            #expect(simCheck.status == 0, "\(simCheck.stderr)")
            let coverage = try device.cellpath(["coverage", "--json"] + server)
            #expect(coverage.status == 0, "\(coverage.stderr)")
            #expect(try JSONValue.parse(coverage.stdout)["network_id"]?.string == "00101")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
        }
    }

    /// The keys of the first table under `heading` in docs/json.md (`a`, `b` in "| `a`, `b` | …" rows).
    static func documentedKeys(_ heading: String, table: Int = 0) throws -> Set<String> {
        let text = try #require(Repository.read("docs/json.md"))
        let section = try #require(text.components(separatedBy: "\n## ").first { $0.hasPrefix(heading) })
        let tables = section.components(separatedBy: "| key | type | meaning |").dropFirst()
        let rows = tables[tables.startIndex + table].split(separator: "\n").dropFirst().prefix { $0.hasPrefix("|") }
        return Set(
            rows.flatMap { row in
                row.split(separator: "|")[0].split(separator: ",").map {
                    $0.trimmingCharacters(in: " ")[...].trimmingCharacters(in: "`")
                }
            })
    }

    /// The JSON of a run, of a field-mode summary and of coverage has exactly the keys that
    /// docs/json.md lists.
    @Test func theJSONHasTheKeysDocsJSONLists() throws {
        try SimulatedDevice.with(connect: false) { device in
            let run = try JSONValue.parse(
                try device.cellpath(["subscriber-check", "+447940448591", "--direct", "--json"]).stdout)
            // `position` is there with --location only (LocationEndToEndTests).
            #expect(
                Set(run.objectKeys)
                    == (try Self.documentedKeys("`cellpath subscriber-check`")).subtracting(["position"]))
            let field = try device.cellpath(["subscriber-check", "+447940448591", "--direct", "--json", "--repeat", "2"]
            ).stdout
            let summary = try JSONValue.parse(String(try #require(field.split(separator: "\n").last)))
            // `sims` is there with --sim-slot all only (SIMSlotsFieldRunEndToEndTests).
            #expect(
                Set(summary.objectKeys).subtracting(["warnings"])
                    == (try Self.documentedKeys("`cellpath subscriber-check`", table: 1)).subtracting(["sims"]))
            let coverage = try JSONValue.parse(try device.cellpath(["coverage", "--direct", "--json"]).stdout)
            #expect(Set(coverage.objectKeys) == (try Self.documentedKeys("`cellpath coverage`")).union(["warnings"]))
        }
    }
}
