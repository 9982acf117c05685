import CellpathCore
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// `--location` in a world: the QMI modem's GNSS fix recorded as the check's position (single
/// check and field run), none with a warning from a modem without a fix (`--position` then
/// recorded instead), `cellpath report` plotting both; `sim-check`, which reads no modem, has no `--location`.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct LocationEndToEndTests {
    /// Modem 0: QMI with a fix in Paris, 8 m; modem 1: QMI without a fix.
    static var fleet: Scenario {
        var scenario = Scenario()
        scenario.modems = [SimulatedModem(index: 0), SimulatedModem(index: 1)]
        for index in scenario.modems.indices { scenario.modems[index].protocol = .qmi }
        scenario.modems[0].gnss = SimulatedGNSS(lat: 48.8584, lon: 2.2945, accuracy: 8, ageSeconds: 2)
        return scenario
    }

    @Test func aSingleCheckRecordsTheFixWithTheKeysDocsJSONLists() throws {
        try SimulatedDevice.with(Self.fleet, connect: false) { device in
            let result = try device.cellpath(["subscriber-check", "-m", "0", "--direct", "--location", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let run = try JSONValue.parse(result.stdout)
            #expect(
                Set(run.objectKeys) == (try CheckCommandsEndToEndTests.documentedKeys("`cellpath subscriber-check`")))
            let position = try #require(run["position"], "\(result.stdout)")
            #expect(position["lat"]?.number == 48.8584)
            #expect(position["lon"]?.number == 2.2945)
            #expect(position["source"]?.string == "gnss")
            #expect(position["accuracy_m"]?.number == 8)
            let age = try #require(position["age_s"]?.number)
            #expect(age >= 1.9 && age < 30, "\(age)")
            let fixTime = try #require(position["fix_time"]?.number)
            #expect(abs(WallClock.now - age - fixTime) < 30)
            #expect(!result.stderr.contains("no GNSS fix"), "\(result.stderr)")
        }
    }

    @Test func aFieldRunRecordsEachModemsFixOrThePositionGivenWithAWarning() throws {
        try SimulatedDevice.with(Self.fleet, connect: false) { device in
            let start = ContinuousClock.now
            let result = try device.cellpath([
                "subscriber-check", "-m", "all", "--repeat", "2", "--direct", "--location", "--position", "51.5,-0.12",
                "--records-file", "/tmp/cellpath-location-e2e.jsonl", "--json"
            ])
            defer { _ = try? device.run(["rm", "-f", "/tmp/cellpath-location-e2e.jsonl"]) }
            #expect(result.status == 0, "\(result.stderr)")
            let runs = try result.stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }
                .filter { $0["run"] != nil }
            #expect(runs.count == 4, "\(result.stdout)")
            for run in runs {
                #expect(run.objectKeys.prefix(5) == ["run_id", "modem", "run", "started_at", "position"], "\(run)")
                let position = try #require(run["position"])
                if run["modem"]?.int == 0 {
                    #expect(position["source"]?.string == "gnss")
                    #expect(position["lat"]?.number == 48.8584)
                } else {
                    #expect(position.objectKeys == ["lat", "lon", "source"], "\(position)")
                    #expect(position["source"]?.string == "fixed")
                    #expect(position["lat"]?.number == 51.5)
                }
            }
            // Told once for modem 1's two runs without a fix, as the reason stays the same.
            #expect(
                result.stderr.split(separator: "\n").filter {
                    String($0).contains("--location: no GNSS fix from modem 1: no position report within 5.0 seconds")
                }.count == 1,
                "\(result.stderr)")
            // Modem 1's two reads waited their bound beside the chains, not after them.
            #expect(ContinuousClock.now - start < .seconds(40))

            let report = try device.cellpath(["report", "/tmp/cellpath-location-e2e.jsonl", "--format", "json"])
            #expect(report.status == 0, "\(report.stderr)")
            let places = try #require(try JSONValue.parse(report.stdout)["positions"]?.array, "\(report.stdout)")
            #expect(Set(places.compactMap { $0["lat"]?.number }) == [48.8584, 51.5], "\(report.stdout)")
        }
    }

    /// Through the real ModemManager: its Location interface's GPS raw source (built from the
    /// LOC service's NMEA traces) enabled for the read and disabled again; the fix recorded
    /// without an accuracy, which GPS raw does not give. The position is recorded whatever the
    /// check's outcome, which is not this test's.
    @Test func throughModemManagerTheGPSRawSourceIsReadAndSetBack() throws {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0)]
        scenario.modems[0].protocol = .qmi
        scenario.modems[0].gnss = SimulatedGNSS(lat: 48.8584, lon: 2.2945, accuracy: 8, ageSeconds: 2)
        scenario.modemManager = true
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try device.cellpath([
                "subscriber-check", "-m", "0", "--backend", "modemmanager", "--direct", "--location", "--json"
            ])
            let run = try JSONValue.parse(result.stdout)
            #expect(run["path"]?["modem_backend"]?.string == "modemmanager", "\(result.stdout)")
            let position = try #require(run["position"], "\(result.stderr)")
            #expect(position.objectKeys == ["lat", "lon", "source", "fix_time", "age_s"], "\(position)")
            #expect(position["lat"]?.number == 48.8584)
            #expect(position["lon"]?.number == 2.2945)
            #expect(position["source"]?.string == "gnss")
            let age = try #require(position["age_s"]?.number)
            #expect(age >= 1.9 && age < 30, "\(age)")
            let status = try device.run(["mmcli", "-m", "any", "--location-status"])
            #expect(status.stdout.contains("capabilities: 3gpp-lac-ci, gps-raw"), "\(status.stdout)")
            let enabled = status.stdout.split(separator: "\n").first { $0.contains("enabled:") }
            #expect(enabled?.hasSuffix("enabled: 3gpp-lac-ci") == true, "\(status.stdout)")
        }
    }

    @Test func simCheckRefusesLocation() throws {
        try SimulatedDevice.with(Self.fleet, connect: false) { device in
            let refused = try device.cellpath(["sim-check", "+447940448591", "--direct", "--location"])
            #expect(refused.status == 64, "\(refused.stderr)")
            #expect(refused.stderr.contains("unknown option '--location'"), "\(refused.stderr)")
        }
    }
}
