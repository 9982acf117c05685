import CellpathCore
import SystemSupport

/// `--format html`: one self-contained page (no network: Chart.js is inlined) whose charts are
/// drawn by Chart.js from the report's figures, embedded as the same JSON that `--format json`
/// writes. Nothing from the records is written into the page but that JSON, escaped so that no
/// text in a record can end its script element.
package enum FieldReportHTML {
    /// Where Debian's libjs-chart.js installs the UMD build of Chart.js (defines `Chart`).
    package static let chartJSPath = "/usr/share/javascript/chart.js/chart.min.js"

    /// Chart.js's code from `path`, made safe to inline in a script element; a clear error naming
    /// the Debian package when it is missing.
    package static func chartJS(at path: String = chartJSPath) throws(CellpathError) -> String {
        do {
            let code = String(decoding: try FileSystem.read(path, limit: 8 << 20), as: UTF8.self)
            return code.replacingEvery("</script", with: "<\\/script")
        } catch {
            throw CellpathError(
                .unavailable, "couldn't read Chart.js (\(path)): \(error.reason)",
                hint: "install Debian's package libjs-chart.js (apt-get install libjs-chart.js, or make deps)")
        }
    }

    /// The page for `figures`; `sources` names the inputs (shown in the header).
    package static func page(_ figures: ReportFigures, sources: [String], chartJS: String) -> String {
        var data = figures.json
        if case .object(var members) = data {
            members.append(("sources", .array(sources.map(JSONValue.string))))
            members.append(("notes", .array(notes(figures).map(JSONValue.string))))
            data = .object(members)
        }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
            <title>cellpath field report</title>
            <style>
            body { font-family: sans-serif; margin: 1.5em; color: #222; }
            h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
            table { border-collapse: collapse; margin: 0.5em 0; }
            td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
            th:first-child, td:first-child { text-align: left; }
            .chart { position: relative; width: 900px; height: 320px; margin: 0.5em 0 1em; }
            .note { color: #666; font-style: italic; }
            </style>
            <script>\(chartJS)</script>
            </head>
            <body>
            <h1>cellpath field report</h1>
            <table id="summary"></table>
            <div id="report"></div>
            <script type="application/json" id="report-data">\(scriptSafe(data.serialized))</script>
            <script>\(script)</script>
            </body>
            </html>

            """
    }

    /// Why a chart is left out: the records carry no such context.
    static func notes(_ figures: ReportFigures) -> [String] {
        var notes: [String] = []
        let radio: [(FieldReportAggregator.Dimension, String)] = [
            (.operator, "radio.operator"), (.rat, "radio.rat"), (.cell, "radio.cell_id"), (.band, "radio.band")
        ]
        for (dimension, member) in radio where figures.grouping(dimension) == nil {
            notes.append("No record carries \(member): the results by \(dimension.rawValue) are left out.")
        }
        if figures.signal.isEmpty { notes.append("No record carries radio.rsrp_dbm: the signal charts are left out.") }
        if figures.places.isEmpty {
            notes.append("No record carries position.lat/lon: the position plot is left out.")
        }
        if figures.untimed > 0 {
            notes.append("\(figures.untimed) checks have no start time and are not in the timeline.")
        }
        return notes
    }

    /// JSON made safe inside a script element: `<`, `>`, `&` and the JavaScript line separators
    /// written as \\u escapes (they occur only inside strings, where JSON allows them).
    package static func scriptSafe(_ json: String) -> String {
        var out = ""
        out.reserveCapacity(json.utf8.count)
        for scalar in json.unicodeScalars {
            switch scalar {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The page's code: reads the figures and draws each chart with Chart.js (ids `chart-…`,
    /// which the browser test reads back); text from the records is set as text, never as HTML.
    static let script = #"""
        "use strict";
        const data = JSON.parse(document.getElementById("report-data").textContent);
        const report = document.getElementById("report");
        const palette = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"];
        const outcomeColors = { verified: "#1b9e77", not_verified: "#e6ab02", sim_changed: "#7570b3", failed: "#d95f02" };
        const outcomeLabels = { verified: "verified", not_verified: "not verified", sim_changed: "SIM changed", failed: "failed" };
        Chart.defaults.animation = false;
        Chart.defaults.maintainAspectRatio = false;

        function element(tag, text, className) {
          const node = document.createElement(tag);
          if (text !== undefined) node.textContent = text;
          if (className) node.className = className;
          return node;
        }
        function section(title) { report.appendChild(element("h2", title)); }
        function note(text) { report.appendChild(element("p", text, "note")); }
        function chart(id, config) {
          const box = element("div", undefined, "chart");
          const canvas = element("canvas");
          canvas.id = id;
          box.appendChild(canvas);
          report.appendChild(box);
          return new Chart(canvas, config);
        }
        function table(parent, header, rows) {
          const head = element("tr");
          header.forEach(text => head.appendChild(element("th", text)));
          parent.appendChild(head);
          rows.forEach(row => {
            const line = element("tr");
            row.forEach(text => line.appendChild(element("td", String(text))));
            parent.appendChild(line);
          });
          return parent;
        }
        function time(seconds) { return new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 16); }
        function ms(value) { return value.toFixed(1); }
        function percent(rate) { return (rate * 100).toFixed(1) + "%"; }

        table(document.getElementById("summary"), ["", ""], [
          ["inputs", data.sources.join(", ")],
          ["products", data.products.join(", ")],
          ["checks", data.checks],
          ["concluded", data.concluded + " (" + percent(data.success_rate) + ")"],
          ["verified / not verified / SIM changed / failed",
           [data.outcomes.verified, data.outcomes.not_verified, data.outcomes.sim_changed, data.outcomes.failed].join(" / ")],
          ["first check", data.first_started_at === null ? "-" : time(data.first_started_at) + " UTC"],
          ["last check", data.last_started_at === null ? "-" : time(data.last_started_at) + " UTC"]
        ]);

        section("Success rate over time");
        if (data.timeline.buckets.length === 0) note("No record carries a start time: the timeline is left out.");
        else chart("chart-timeline", {
          data: {
            labels: data.timeline.buckets.map(b => time(b.start)),
            datasets: [
              { type: "line", label: "success rate (%)", yAxisID: "rate", borderColor: palette[0],
                data: data.timeline.buckets.map(b => b.success_rate * 100) },
              { type: "bar", label: "checks", yAxisID: "checks", backgroundColor: "#cccccc",
                data: data.timeline.buckets.map(b => b.checks) }
            ]
          },
          options: { scales: { rate: { position: "left", min: 0, max: 100 }, checks: { position: "right", beginAtZero: true } },
                     plugins: { title: { display: true, text: "buckets of " + data.timeline.bucket_seconds / 60 + " min (UTC)" } } }
        });

        section("Step latency");
        table(report.appendChild(element("table")), ["step", "checks", "p50 (ms)", "p95 (ms)", "p99 (ms)", "max (ms)"],
              data.steps.map(s => [s.step, s.count, ms(s.p50_ms), ms(s.p95_ms), ms(s.p99_ms), ms(s.max_ms)]));
        data.steps.forEach((s, index) => {
          report.appendChild(element("h3", s.step + ": histogram"));
          chart("chart-histogram-" + index, {
            type: "bar",
            data: { labels: s.histogram.map(b => ms(b.from_ms)),
                    datasets: [{ label: s.step + " checks per " + ms(s.bin_width_ms) + " ms", backgroundColor: palette[index % palette.length],
                                 data: s.histogram.map(b => b.count) }] },
            options: { scales: { x: { title: { display: true, text: "ms (bin start)" } } } }
          });
        });
        if (data.steps.length > 0) {
          report.appendChild(element("h3", "cumulative distribution"));
          chart("chart-cdf", {
            type: "line",
            data: { datasets: data.steps.map((s, index) => ({
              label: s.step, borderColor: palette[index % palette.length], pointRadius: 0, stepped: true,
              data: s.cdf.map(p => ({ x: p.ms, y: p.fraction * 100 })) })) },
            options: { parsing: false, scales: { x: { type: "linear", title: { display: true, text: "ms" } },
                                                 y: { min: 0, max: 100, title: { display: true, text: "% of checks" } } } }
          });
        }

        function results(id, groups) {
          chart(id, {
            type: "bar",
            data: { labels: groups.map(g => g.key),
                    datasets: Object.keys(outcomeLabels).map(key => ({
                      label: outcomeLabels[key], backgroundColor: outcomeColors[key], data: groups.map(g => g.outcomes[key]) })) },
            options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } }
          });
        }
        const dimensions = [["modem", "modem"], ["operator", "operator"], ["rat", "technology"], ["cell", "cell"], ["band", "band"]];
        dimensions.forEach(([dimension, title]) => {
          const groups = data.groups[dimension];
          if (!groups) return;
          section("Results by " + title);
          results("chart-results-" + dimension, groups);
          const reasons = [...new Set(groups.flatMap(g => g.failures.map(f => f.reason)))];
          if (reasons.length === 0) { note("No check failed."); return; }
          chart("chart-failures-" + dimension, {
            type: "bar",
            data: { labels: groups.map(g => g.key),
                    datasets: reasons.map((reason, index) => ({
                      label: reason, backgroundColor: palette[index % palette.length],
                      data: groups.map(g => (g.failures.find(f => f.reason === reason) || { count: 0 }).count) })) },
            options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } },
                       plugins: { title: { display: true, text: "failures by reason" } } }
          });
        });

        if (data.signal.length > 0) {
          section("Signal (RSRP) against latency and failures");
          chart("chart-signal-latency", {
            type: "line",
            data: { datasets: [{ label: "median total (ms) of concluded checks", borderColor: palette[2],
                                 data: data.signal.filter(b => b.median_total_ms !== null).map(b => ({ x: b.rsrp_dbm, y: b.median_total_ms })) }] },
            options: { parsing: false, scales: { x: { type: "linear", title: { display: true, text: "RSRP (dBm)" } } } }
          });
          chart("chart-signal-failures", {
            type: "bar",
            data: { labels: data.signal.map(b => b.rsrp_dbm),
                    datasets: [{ label: "failure rate (%)", backgroundColor: palette[1], data: data.signal.map(b => b.failure_rate * 100) }] },
            options: { scales: { x: { title: { display: true, text: "RSRP (dBm)" } }, y: { min: 0, max: 100 } } }
          });
        }

        if (data.positions.length > 0) {
          section("Positions");
          chart("chart-positions", {
            type: "scatter",
            data: { datasets: [
              { label: "all checks concluded", backgroundColor: palette[0],
                data: data.positions.filter(p => p.failed === 0).map(p => ({ x: p.lon, y: p.lat })) },
              { label: "some checks failed", backgroundColor: palette[1],
                data: data.positions.filter(p => p.failed > 0).map(p => ({ x: p.lon, y: p.lat })) }
            ] },
            options: { scales: { x: { title: { display: true, text: "longitude" } }, y: { title: { display: true, text: "latitude" } } } }
          });
        }

        if (data.notes.length > 0) {
          section("Notes");
          data.notes.forEach(note);
        }
        """#
}
