import CellpathCore
import Glibc
import SystemSupport
import Testing

/// `cellpath report`'s page in a real browser: Debian's chromium, headless, driven by
/// chromium-driver through selenium (Tests/BrowserChecks/report_charts.py, installed by `make
/// test-browser-deps`). The charts are read back from Chart.js's instances in the page.
public enum ReportBrowser {
    /// Where the screenshots stay after the tests.
    public static let artefacts = Repository.root + "/.build/test-artefacts"

    /// Opens `page` and keeps a screenshot at `artefacts/<screenshot>`; expects the page's title,
    /// no console error, a PNG screenshot, every chart sized and every dataset's points drawn.
    /// Returns the charts by element id: `{id, type, width, height, labels, datasets: [{label,
    /// data, drawn}]}`. Chromium's profile goes into `home`, the page's directory.
    public static func charts(of page: String, screenshot: String, home: String) throws -> [String: JSONValue] {
        let python = Repository.root + "/.build/test-python/bin/python3"
        try #require(access(python, X_OK) == 0, "run 'make test-browser-deps' first (make test does)")
        try FileSystem.makeDirectories(artefacts)
        let picture = artefacts + "/" + screenshot
        unlink(picture)
        let browser = try ProcessRunner.run(
            [python, Repository.root + "/Tests/BrowserChecks/report_charts.py", page, picture],
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": home])
        try #require(browser.status == 0, "the browser did not run: \(browser.stderr)")
        let result = try JSONValue.parse(browser.stdout)
        #expect(result["title"]?.string == "cellpath field report")
        let errors = result["console"]?.array?.filter { $0["level"]?.string == "SEVERE" } ?? []
        #expect(errors.isEmpty, "console errors: \(errors)")
        #expect(try FileSystem.read(picture, limit: 1 << 24).starts(with: [0x89, 0x50, 0x4E, 0x47]))

        var charts: [String: JSONValue] = [:]
        for chart in result["charts"]?.array ?? [] { charts[chart["id"]?.string ?? ""] = chart }
        for (id, chart) in charts {
            #expect((chart["width"]?.int ?? 0) > 0 && (chart["height"]?.int ?? 0) > 0, "\(id) has no size")
            for dataset in chart["datasets"]?.array ?? [] {
                #expect(
                    dataset["drawn"] == .int(dataset["data"]?.array?.count ?? -1),
                    "\(id): \(dataset["label"] ?? .null)")
            }
        }
        return charts
    }

    /// The data of the dataset labelled `label` of `chart`.
    public static func series(_ chart: JSONValue?, _ label: String) -> [JSONValue]? {
        chart?["datasets"]?.array?.first { $0["label"]?.string == label }?["data"]?.array
    }
}
