import CellpathCore
import SystemSupport
import TestSupport
import Testing

/// `cellpath report`'s page in a real browser (`ReportBrowser`: headless chromium): the charts
/// read back from Chart.js's instances in the page are compared with the report's JSON figures;
/// the page must log no console error. The screenshot is kept in .build/test-artefacts.
@Suite(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads)
struct ReportBrowserEndToEndTests {
    /// The screenshot's name in `ReportBrowser.artefacts`.
    static let screenshot = "report-browser.png"

    /// Three modems over two hours, with radio context and positions, some runs failing.
    static var lines: [String] {
        let operators = ["Vodafone UK", "EE", "O2 - UK"]
        return (0 ..< 60).map { index in
            let modem = index % 3
            let failed = index % 7 == 3
            let checkURL = 300 + Double((index * 37) % 200)
            let radio: JSONValue = .object([
                ("operator", .string(operators[modem])), ("rat", .string(modem == 1 ? "nr5g" : "lte")),
                ("cell_id", .int(1000 + index % 4)), ("band", .string("B\(modem * 10 + 3)")),
                ("rsrp_dbm", .int(-80 - index % 30))
            ])
            let steps: [JSONValue] = [
                step("path", 150 + Double(index % 10), true), step("create", 90, true),
                step("check_url", checkURL, !failed), step("complete", 60, !failed)
            ]
            return JSONValue.object([
                ("modem", .int(modem)), ("run", .int(index / 3 + 1)),
                ("started_at", .double(1_796_097_600 + Double(index) * 120)), ("product", .string("subscriber_check")),
                ("phone_number", .string("+447940448591")), ("outcome", failed ? .null : .string("verified")),
                ("steps", .array(steps)), ("total_ms", .double(checkURL + 300)), ("radio", radio),
                ("position", .object([("lat", .double(51.5 + Double(index % 5) / 1000)), ("lon", .double(-0.12))])),
                ("failure", failed ? .string("notMobileIP") : .null), ("error", failed ? .string("412") : .null)
            ]).serialized
        }
    }

    static func step(_ name: String, _ ms: Double, _ succeeded: Bool) -> JSONValue {
        .object([("step", .string(name)), ("duration_ms", .double(ms)), ("succeeded", .bool(succeeded))])
    }

    @Test func theChartsRenderWithTheReportsSeriesAndNoConsoleError() throws {
        try TemporaryDirectory.with("cellpath-report-browser") { directory in
            let runs = "\(directory)/runs.jsonl", page = "\(directory)/report.html"
            try FileSystem.write(Array((Self.lines.joined(separator: "\n") + "\n").utf8), to: runs)
            let html = try CellpathBinary.run(["report", runs, "-o", page])
            #expect(html.status == 0, "\(html.stderr)")
            let json = try CellpathBinary.run(["report", runs, "--format", "json"])
            #expect(json.status == 0, "\(json.stderr)")
            let figures = try JSONValue.parse(json.stdout)

            let charts = try ReportBrowser.charts(of: page, screenshot: Self.screenshot, home: directory)
            let steps = figures["steps"]?.array ?? []
            let dimensions = ["modem", "operator", "rat", "cell", "band"]
            let expected = Set(
                ["chart-timeline", "chart-cdf", "chart-signal-latency", "chart-signal-failures", "chart-positions"]
                    + steps.indices.map { "chart-histogram-\($0)" }
                    + dimensions.flatMap { ["chart-results-\($0)", "chart-failures-\($0)"] })
            #expect(Set(charts.keys) == expected)

            let buckets = figures["timeline"]?["buckets"]?.array ?? []
            let timeline = try #require(charts["chart-timeline"]?["datasets"]?.array)
            #expect(timeline.compactMap { $0["label"]?.string } == ["success rate (%)", "checks"])
            #expect(timeline[1]["data"] == .array(buckets.map { $0["checks"] ?? .null }))
            #expect(buckets.count > 1)

            for (index, step) in steps.enumerated() {
                let bars = try #require(charts["chart-histogram-\(index)"]?["datasets"]?.array?.first)
                #expect(bars["data"]?.array?.count == step["histogram"]?.array?.count)
                #expect(bars["data"]?.array?.compactMap(\.int).reduce(0, +) == step["count"]?.int)
            }
            let cdf = try #require(charts["chart-cdf"]?["datasets"]?.array)
            #expect(cdf.compactMap { $0["label"]?.string } == steps.compactMap { $0["step"]?.string })
            #expect(cdf.map { $0["data"]?.array?.count } == steps.map { $0["cdf"]?.array?.count })

            for dimension in dimensions {
                let groups = figures["groups"]?[dimension]?.array ?? []
                let results = try #require(charts["chart-results-\(dimension)"])
                #expect(results["labels"] == .array(groups.map { $0["key"] ?? .null }))
                let verified = results["datasets"]?.array?.first { $0["label"]?.string == "verified" }
                #expect(verified?["data"] == .array(groups.map { $0["outcomes"]?["verified"] ?? .null }))
                let failures = charts["chart-failures-\(dimension)"]?["datasets"]?.array ?? []
                #expect(failures.compactMap { $0["label"]?.string } == ["notMobileIP"])
            }
            #expect(
                charts["chart-results-modem"]?["labels"]
                    == .array(["modem 0", "modem 1", "modem 2"].map(JSONValue.string)))
            let signal = figures["signal"]?.array ?? []
            #expect(charts["chart-signal-failures"]?["datasets"]?.array?.first?["data"]?.array?.count == signal.count)
            #expect(signal.count == 30)
            let positions = charts["chart-positions"]?["datasets"]?.array ?? []
            #expect(
                positions.compactMap { $0["data"]?.array?.count }.reduce(0, +) == figures["positions"]?.array?.count)
            #expect(figures["positions"]?.array?.count == 5)
        }
    }
}
