import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// A simulated drive (scripts/drive-scenario.json): two modems move through cells on a timeline
/// of scenario events (a handover to a weaker cell, a drop to 3G onto another operator, whose
/// carrier refuses the check, and back). A field run with `--repeat` and `-m all` records the
/// radio of every check, and with `--location` the QMI modem's position, which moves with its
/// cells; `cellpath report --format json` on those records gives per operator, technology and
/// cell the same figures as counted here from the JSON Lines, and plots the positions. The same
/// drive on two dual-SIM modems, every SIM walked (`--sim-slot all`), is the field test's whole:
/// the report's figures, in JSON and as the charts a browser draws, are those of its records.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct DriveEndToEndTests {
    @Test func aFieldRunOnADriveReportsPerOperatorTechnologyAndCell() throws {
        let scenario = try Scenario.load(path: Repository.root + "/scripts/drive-scenario.json")
        try SimulatedDevice.with(scenario, connect: false) { world in
            let directory = try TemporaryDirectory.make("cellpath-drive")
            defer { FileSystem.removeTree(directory) }
            let run = try world.cellpath([
                "subscriber-check", "-m", "all", "--direct", "--repeat", "30", "--interval", "1", "--location", "--json"
            ])
            // The runs the other operator's carrier refused make the field run's exit 69.
            #expect(run.status == 69, "\(run.stderr)")
            let records = run.stdout.split(separator: "\n").compactMap { JSONValue.parse(Array($0.utf8)) }
                .filter { $0["run"] != nil && $0["steps"] != nil }
            try #require(records.count == 60, "\(records.count) records: \(run.stdout.suffix(2000))")
            let runs = directory + "/drive.jsonl"
            try FileSystem.write(Array(run.stdout.utf8), to: runs)

            // The drive as the records tell it: three cells and more, two operators, LTE and
            // UMTS, a signal drop, and the other operator's carrier refusing the check.
            let radios = records.compactMap { $0["radio"] }
            let cells = Set(radios.compactMap { $0["cell_id"]?.intValue })
            let operators = Set(radios.compactMap { $0[string: "operator"] })
            #expect(cells.count >= 4, "\(cells)")
            #expect(operators == ["001-01", "001-02"], "\(operators)")
            #expect(Set(radios.compactMap { $0[string: "rat"] }) == ["lte", "umts"])
            #expect(radios.contains { $0["cell_id"] == .int(1_048_578) && Self.number($0["rsrp_dbm"]) == -118 })
            try Self.expectRefusalsOn("001-02", records)
            #expect(records.contains { $0["radio"]?[string: "operator"] == "001-01" && $0[string: "outcome"] != nil })

            // Modem 0 (QMI) is where its serving cell is: the places of its cells, more than one;
            // modem 1 (MBIM) has no GNSS, so its records carry no position.
            let places = Set(
                scenario.modems[0].network.cells.compactMap { $0.gnss }.map { [$0.lat, $0.lon] })
            let positions = records.filter { $0["modem"] == .int(0) }.compactMap { record -> [Double]? in
                guard let position = record["position"], position[string: "source"] == "gnss",
                    let lat = position["lat"]?.number, let lon = position["lon"]?.number
                else { return nil }
                return [lat, lon]
            }
            #expect(positions.count == 30 && Set(positions).isSubset(of: places), "\(positions)")
            #expect(Set(positions).count >= 2, "\(positions)")
            #expect(records.filter { $0["modem"] == .int(1) }.allSatisfy { $0["position"] == nil })

            let report = try CellpathBinary.run(["report", runs, "--format", "json"])
            #expect(report.status == 0, "\(report.stderr)")
            let plotted = try JSONValue.parse(report.stdout)["positions"]?.array ?? []
            #expect(Set(plotted.compactMap { $0["lat"]?.number }) == Set(positions.map { $0[0] }), "\(plotted)")
            let groups = try #require(try JSONValue.parse(report.stdout)["groups"])
            for dimension in ["operator", "rat", "cell"] {
                #expect(
                    RecordTally.groups(groups[dimension]) == RecordTally.grouped(records, by: dimension),
                    "\(dimension)")
            }
        }
    }

    /// The drive on two dual-SIM modems (MBIM: the protocol cellpath switches slots over), each
    /// over its cells of scripts/drive-scenario.json on its timeline: modem 0 from a strong LTE
    /// cell to a weak one (a handover and a signal drop), then to the second operator's UMTS cell,
    /// whose carrier refuses the check; modem 1 onto that operator's LTE cell and back. Each modem's
    /// second slot holds a SIM of its own; modem 1's is the second operator's wherever it is.
    static func dualSIMDrive() throws -> Scenario {
        var scenario = try Scenario.load(path: Repository.root + "/scripts/drive-scenario.json")
        scenario.modems = scenario.modems.indices.map { n in
            var modem = SimulatedModem(index: n)
            modem.device = .dualSIM
            modem.network.cells = scenario.modems[n].network.cells
            modem.secondSlot = SecondSIMSlot(esim: false, sim: SimulatedSIM(index: 32 + n))
            return modem
        }
        scenario.modems[1].secondSlot?.network = SimulatedNetwork(mnc: "02", operatorName: "cellpath roam")
        return scenario
    }

    /// The field test's whole: the drive with `--repeat`, `-m all` and `--sim-slot all`, then
    /// `cellpath report` as JSON and HTML. Every SIM of every modem has its runs; the records tell
    /// the drive (three cells and more, two operators, a handover, a signal drop, the carrier's
    /// refusals); the report's figures are those counted here from the records, and the charts
    /// a headless browser draws from the page have the records' series and points.
    @Test func everySIMOnADualSIMDriveIsReportedAsItsRecordsTell() throws {
        let repeats = 10
        try SimulatedDevice.with(try Self.dualSIMDrive(), connect: false) { world in
            let directory = try TemporaryDirectory.make("cellpath-dual-sim-drive")
            defer { FileSystem.removeTree(directory) }
            let run = try world.cellpath([
                "subscriber-check", "-m", "all", "--sim-slot", "all", "--direct", "--repeat", "\(repeats)",
                "--interval", "1", "--json"
            ])
            #expect(run.status == 69, "the refused runs make the field run's exit 69: \(run.stderr)")
            let lines = try run.stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }
            let records = lines.filter { $0["run"] != nil && $0["steps"] != nil }
            let lanes = Dictionary(grouping: records) { "\($0["modem"]?.int ?? -1)/\($0["slot"]?.int ?? -1)" }
            #expect(lanes.mapValues(\.count) == ["0/1": repeats, "0/2": repeats, "1/1": repeats, "1/2": repeats])
            let summary = try #require(lines.last)
            #expect(summary["sims"]?.array?.count == 4 && summary["runs"]?.int == records.count, "\(summary)")
            #expect(summary["concluded"]?.int == RecordTally(records).concluded)

            // The drive as the records tell it.
            let radios = records.compactMap { $0["radio"] }
            #expect(Set(radios.compactMap { $0["cell_id"]?.int }).count >= 3, "\(radios)")
            #expect(Set(radios.compactMap { $0[string: "operator"] }) == ["001-01", "001-02"])
            let handedOver = lanes.values.contains { lane in
                Set(lane.compactMap { $0["radio"]?["cell_id"]?.int }).count > 1
            }
            #expect(handedOver, "no lane changed cells")
            let strong = radios.filter { $0["cell_id"] == .int(1_048_577) }.compactMap { Self.number($0["rssi_dbm"]) }
            let weak = radios.filter { $0["cell_id"] == .int(1_048_578) }.compactMap { Self.number($0["rssi_dbm"]) }
            #expect(Set(strong) == [-63] && Set(weak) == [-97], "signal drop: \(strong) then \(weak)")
            try Self.expectRefusalsOn("001-02", records)
            #expect(lanes["1/2"]?.allSatisfy { $0[string: "failure"] == Self.refusal } == true)

            let runs = directory + "/drive.jsonl", page = directory + "/drive.html"
            try FileSystem.write(Array(run.stdout.utf8), to: runs)
            let json = try CellpathBinary.run(["report", runs, "--format", "json"])
            #expect(json.status == 0, "\(json.stderr)")
            let figures = try JSONValue.parse(json.stdout)
            try Self.expectFigures(figures, of: records)
            let html = try CellpathBinary.run(["report", runs, "-o", page])
            #expect(html.status == 0, "\(html.stderr)")
            let charts = try ReportBrowser.charts(of: page, screenshot: "report-drive.png", home: directory)
            try Self.expectCharts(charts, of: records)
        }
    }

    /// The report's JSON figures are the records' as counted here.
    static func expectFigures(_ figures: JSONValue, of records: [JSONValue]) throws {
        let all = RecordTally(records)
        #expect(RecordTally(report: figures) == all, "\(figures)")
        #expect(figures["failures"] == all.failureList)
        #expect(figures["products"] == .array([.string("subscriber_check")]))
        for dimension in ["modem", "operator", "rat", "cell", "band"] {
            let expected = RecordTally.grouped(records, by: dimension)
            #expect(RecordTally.groups(figures["groups"]?[dimension]) == expected, "\(dimension)")
        }
        let steps = RecordTally.durations(records)
        let reported = figures["steps"]?.array ?? []
        #expect(reported.compactMap { $0[string: "step"] } == steps.map(\.step))
        for (step, (name, ms)) in zip(reported, steps) {
            #expect(step["count"]?.int == ms.count, "\(name)")
            for (key, value) in [
                ("p50_ms", RecordTally.nearestRank(ms, 0.5)), ("p95_ms", RecordTally.nearestRank(ms, 0.95)),
                ("p99_ms", RecordTally.nearestRank(ms, 0.99)), ("min_ms", ms[0]), ("max_ms", ms[ms.count - 1])
            ] {
                let mine = try #require(step[key]?.number, "\(name) \(key)")
                #expect(abs(mine - value) < 1e-6, "\(name) \(key): report \(mine), records \(value)")
            }
        }
        let width = try #require(figures["timeline"]?["bucket_seconds"]?.int)
        var buckets: [Int: Int] = [:]
        for start in records.compactMap({ $0["started_at"]?.number }) {
            buckets[Int((start / 60).rounded(.down)) * 60 / width * width, default: 0] += 1
        }
        let timeline = figures["timeline"]?["buckets"]?.array ?? []
        #expect(
            timeline.map { [$0["start"]?.int ?? -1, $0["checks"]?.int ?? -1] }
                == buckets.sorted { $0.key < $1.key }.map { [$0.key, $0.value] })
        var bySignal: [Int: RecordTally] = [:]
        for record in records {
            guard let rsrp = number(record["radio"]?["rsrp_dbm"]) else { continue }
            bySignal[Int(rsrp.rounded()), default: RecordTally()].add(record)
        }
        let signal = figures["signal"]?.array ?? []
        #expect(
            signal.map { [$0["rsrp_dbm"]?.int ?? 0, $0["checks"]?.int ?? -1, $0["failed"]?.int ?? -1] }
                == bySignal.sorted { $0.key < $1.key }.map { [$0.key, $0.value.checks, $0.value.failed] })
        #expect(figures["positions"] == .array([]), "MBIM modems have no GNSS")
    }

    /// The charts the browser drew from the page have the records' series and points.
    static func expectCharts(_ charts: [String: JSONValue], of records: [JSONValue]) throws {
        let steps = RecordTally.durations(records)
        let timeline = try #require(ReportBrowser.series(charts["chart-timeline"], "checks"))
        #expect(timeline.compactMap(\.int).reduce(0, +) == records.count)
        for (index, (name, ms)) in steps.enumerated() {
            let bars = try #require(charts["chart-histogram-\(index)"]?["datasets"]?.array?.first?["data"]?.array)
            #expect(bars.compactMap(\.int).reduce(0, +) == ms.count, "\(name)")
        }
        let cdf = charts["chart-cdf"]?["datasets"]?.array ?? []
        #expect(cdf.compactMap { $0["label"]?.string } == steps.map(\.step))
        #expect(cdf.map { $0["data"]?.array?.count ?? 0 } == steps.map { min($0.ms.count, 100) })
        for dimension in ["modem", "operator", "rat", "cell", "band"] {
            let groups = RecordTally.grouped(records, by: dimension)
            let results = charts["chart-results-\(dimension)"]
            guard !groups.isEmpty else {
                #expect(results == nil, "\(dimension): no record carries it")
                continue
            }
            let labels = results?["labels"]?.array?.compactMap(\.string) ?? []
            #expect(Set(labels) == Set(groups.keys) && labels.count == groups.count, "\(dimension): \(labels)")
            for (label, series) in [("verified", \RecordTally.verified), ("failed", \RecordTally.failed)] {
                #expect(
                    ReportBrowser.series(results, label) == labels.map { .int(groups[$0]?[keyPath: series] ?? -1) },
                    "\(dimension) \(label)")
            }
            let reasons = Set(groups.values.flatMap(\.failures.keys))
            let failures = charts["chart-failures-\(dimension)"]?["datasets"]?.array ?? []
            #expect(Set(failures.compactMap { $0["label"]?.string }) == reasons, "\(dimension)")
            for reason in reasons {
                #expect(
                    ReportBrowser.series(charts["chart-failures-\(dimension)"], reason)
                        == labels.map { .int(groups[$0]?.failures[reason] ?? 0) }, "\(dimension) \(reason)")
            }
        }
        let rsrp = Set(records.compactMap { number($0["radio"]?["rsrp_dbm"]).map { Int($0.rounded()) } })
        #expect((ReportBrowser.series(charts["chart-signal-failures"], "failure rate (%)")?.count ?? 0) == rsrp.count)
        #expect(charts["chart-positions"] == nil, "no record has a position")
    }

    /// How field mode names a check_url refused by the scenario's carrier (`api.checkURLErrors`).
    static let refusal = "mnoNotSupported"

    /// A run has an outcome exactly when it has no failure; `refusing`'s carrier refused some
    /// runs, each without an outcome. The radio is read beside the chain, not at its first hop
    /// (docs/json.md): a run whose radio disagrees with the carrier's answer (refused off
    /// `refusing`, or concluded on it) is one a handover onto or off `refusing` crossed, so the
    /// run before or after it in its lane (modem and slot) was on another operator than its radio.
    static func expectRefusalsOn(_ refusing: String, _ records: [JSONValue]) throws {
        for record in records {
            #expect((record[string: "outcome"] == nil) == (record[string: "failure"] != nil), "\(record)")
        }
        #expect(records.contains { $0[string: "failure"] == refusal })
        let lanes = Dictionary(grouping: records) { "\($0["modem"]?.int ?? -1)/\($0["slot"]?.int ?? -1)" }
        for lane in lanes.values.map({ $0.sorted { ($0["run"]?.int ?? 0) < ($1["run"]?.int ?? 0) } }) {
            for (index, record) in lane.enumerated() {
                let radio = record["radio"]?[string: "operator"]
                let refused = record[string: "failure"] == refusal
                guard refused != (radio == refusing) && (refused || record[string: "outcome"] != nil) else { continue }
                let neighbours = [index - 1, index + 1].filter(lane.indices.contains).map {
                    lane[$0]["radio"]?[string: "operator"]
                }
                #expect(neighbours.contains { $0 != radio }, "not at a handover: \(record)")
            }
        }
    }

    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let whole): Double(whole)
        case .double(let fraction): fraction
        default: nil
        }
    }
}
