import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// `cellpath report` over real field runs in a simulated world (the fake API in sandbox mode: a
/// number ending in 2 is verified, one ending in 99 fails at check_url): the report's figures
/// are the field summaries' own, from two files; a run cut short is left out with a warning; the
/// CSV has a row per check with the number masked; the HTML page is written whole.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ReportEndToEndTests {
    static var sandbox: Scenario {
        var scenario = Scenario.builtIn
        scenario.api.sandbox = true
        return scenario
    }

    /// The check lines and the summary of a field run's stdout.
    static func split(_ stdout: String) throws -> (lines: [String], summary: JSONValue) {
        let lines = stdout.split(separator: "\n").map(String.init)
        return (Array(lines.dropLast()), try JSONValue.parse(try #require(lines.last)))
    }

    @Test func theReportOfFieldRunsHasTheirSummariesFigures() throws {
        try SimulatedDevice.with(Self.sandbox, connect: false) { device in
            let before = WallClock.now
            let verified = try device.cellpath([
                "subscriber-check", "+447940448592", "--direct", "--repeat", "3", "--interval", "0", "--json"
            ])
            #expect(verified.status == 0, "\(verified.stderr)")
            let failing = try device.cellpath([
                "subscriber-check", "+447940448599", "--direct", "--repeat", "2", "--interval", "0", "--json"
            ])
            #expect(failing.status != 0, "\(failing.stdout)")
            let good = try Self.split(verified.stdout), bad = try Self.split(failing.stdout)
            #expect(bad.summary["concluded"] == .int(0) && good.summary["concluded"] == .int(3))
            // Each line says when its run started, and why it failed.
            let starts = try good.lines.map { try JSONValue.parse($0)["started_at"].flatMap(Self.number) ?? 0 }
            #expect(
                starts.allSatisfy { (before ... WallClock.now).contains($0) } && starts == starts.sorted(), "\(starts)")
            #expect(try bad.lines.allSatisfy { try JSONValue.parse($0)["failure"]?.string != nil })

            try TemporaryDirectory.with("cellpath-report") { directory in
                let first = "\(directory)/verified.jsonl", second = "\(directory)/failing.jsonl"
                try FileSystem.write(Array(verified.stdout.utf8), to: first)
                // The second run's file ends in a third run cut short.
                try FileSystem.write(Array((failing.stdout + bad.lines[0].prefix(40)).utf8), to: second)

                let report = try CellpathBinary.run(["report", first, second, "--format", "json"])
                #expect(report.status == 0, "\(report.stderr)")
                #expect(
                    report.stderr.contains("warning: \(second): the last line was cut short"), "\(report.stderr)")
                let figures = try JSONValue.parse(report.stdout)
                #expect(figures["checks"] == .int(5))
                #expect(figures["concluded"] == good.summary["concluded"])
                #expect(figures["outcomes"]?["verified"] == good.summary["outcomes"]?["verified"])
                #expect(figures["outcomes"]?["failed"] == .int(2))
                // Failures by the reasons the field summary names them.
                #expect(figures["failures"] == bad.summary["failures"], "\(figures["failures"] ?? .null)")
                #expect((figures["timeline"]?["buckets"]?.array?.count ?? 0) >= 1)
                #expect(figures["untimed_checks"] == .int(0), "field runs write started_at")
                #expect(figures["groups"]?["modem"]?.array?.first?["checks"] == .int(5))

                // Each step's p50/p95 of the verified run are its summary's (nearest rank, the same values).
                let alone = try JSONValue.parse(try CellpathBinary.run(["report", first, "--format", "json"]).stdout)
                for step in alone["steps"]?.array ?? [] {
                    let name = try #require(step["step"]?.string)
                    let summary = try #require(good.summary["steps"]?[name], "\(name) not in the summary")
                    for key in ["p50_ms", "p95_ms", "max_ms"] {
                        let mine = try #require(step[key].flatMap(Self.number)),
                            theirs = try #require(summary[key].flatMap(Self.number))
                        #expect(abs(mine - theirs) < 0.01, "\(name) \(key): \(mine) vs \(theirs)")
                    }
                }

                let csv = try CellpathBinary.run(["report", first, second, "--format", "csv"])
                #expect(csv.status == 0, "\(csv.stderr)")
                let rows = csv.stdout.split(separator: "\r\n")
                #expect(rows.count == 6, "a header and five checks: \(csv.stdout)")
                #expect(rows.dropFirst().allSatisfy { $0.contains(",+••••92,") || $0.contains(",+••••99,") })
                let reason = try #require(bad.summary["failures"]?.array?.first?["reason"]?.string)
                #expect(rows.dropFirst(4).allSatisfy { $0.contains(",\(reason),") }, "the failure's reason is named")

                let page = "\(directory)/night.html"
                let html = try CellpathBinary.run(["report", first, second, "-o", page, "--json"])
                #expect(html.status == 0, "\(html.stderr)")
                #expect(try JSONValue.parse(html.stdout)["checks"] == .int(5))
                let text = String(decoding: try FileSystem.read(page, limit: 1 << 24), as: UTF8.self)
                #expect(
                    text.contains("Chart.js v") && text.contains("id=\"report-data\"") && text.hasSuffix("</html>\n"))
                #expect(!text.contains("447940448592"), "the page holds no phone number")
            }
        }
    }

    /// A JSON number as a Double.
    static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
}
