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
/// cell the same figures as counted here from the JSON Lines, and plots the positions.
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
            let refused = records.filter { $0["radio"]?[string: "operator"] == "001-02" }
            #expect(!refused.isEmpty && refused.allSatisfy { $0[string: "outcome"] == nil }, "\(refused)")
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
            for (dimension, key) in [("operator", "operator"), ("rat", "rat"), ("cell", "cell_id")] {
                let expected = Self.counts(records, key)
                let reported = Dictionary(
                    uniqueKeysWithValues: (groups[dimension]?.array ?? []).compactMap { group -> (String, Counts)? in
                        guard let name = group[string: "key"], let checks = group["checks"]?.intValue,
                            let failed = group["outcomes"]?["failed"]?.intValue
                        else { return nil }
                        return (name, Counts(checks: checks, failed: failed))
                    })
                #expect(reported == expected, "\(dimension): report \(reported), records \(expected)")
            }
        }
    }

    struct Counts: Equatable, CustomStringConvertible {
        var checks = 0
        var failed = 0
        var description: String { "\(checks) checks, \(failed) failed" }
    }

    /// Checks and failed checks (no outcome) per value of the radio's `key`, as text; records
    /// whose radio does not tell it are in no group.
    static func counts(_ records: [JSONValue], _ key: String) -> [String: Counts] {
        var counts: [String: Counts] = [:]
        for record in records {
            let value: String
            switch record["radio"]?[key] {
            case .string(let text): value = text
            case .int(let number): value = String(number)
            default: continue
            }
            counts[value, default: Counts()].checks += 1
            if record[string: "outcome"] == nil { counts[value, default: Counts()].failed += 1 }
        }
        return counts
    }

    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let whole): Double(whole)
        case .double(let fraction): fraction
        default: nil
        }
    }
}
