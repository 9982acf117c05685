import CommandLineKit

/// `cellpath report RUNS.jsonl… [-o FILE] [--format html|csv|json]`: a carrier engineer's report
/// of field runs (docs/report.md). Runs in the front: it reads files only, with no modem, no
/// network and no library beyond the front's (implemented in ReportCommand+Run.swift).
package enum ReportCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "report",
        abstract: "Turn field runs' JSON Lines into a report: HTML with charts, CSV or JSON.",
        discussion: """
            Reads the lines that field mode writes (subscriber-check … --repeat N --json, also with -m all), from
            files or stdin (-), as a stream: any number of runs, products and modems. The HTML page is one file
            that opens offline (Chart.js from Debian's libjs-chart.js is inlined): success rate over time, each
            step's latency (histogram, CDF, p50/p95/p99), results and failure reasons per modem, and per
            operator, technology, cell and band, signal against latency and failures, and positions, when the
            records carry them. CSV has one row per check; JSON the figures the page shows. A last line cut short
            (a run stopped by Ctrl-C) is left out with a warning; any other bad line is an error naming its file
            and line (exit 65). Phone numbers and addresses are masked unless --verbose-full.
            """,
        options: Options.self,
        placement: .program(.front),
        examples: [
            .init("A night of checks as an HTML page with charts:", "cellpath report night.jsonl -o night.html"),
            .init("One row per check, for a spreadsheet:", "cellpath report night.jsonl -o night.csv"),
            .init(
                "Two gateways' runs together, the figures as JSON:", "cellpath report gw1.jsonl gw2.jsonl --format json"
            )
        ])

    /// What a report is written as.
    package enum Format: String, Sendable, CaseIterable {
        case html, csv, json
    }

    /// `report`'s options.
    package struct Options: CommandOptions {
        @VariadicArgument(
            "runs", help: "JSON Lines files of field runs (--repeat N --json); - reads stdin.", completion: .files)
        package var runs: [String]
        @Option(
            "output", short: "o", "file",
            help: "Write the report to this file (default: stdout); its extension (.html, .csv, .json) sets the format."
        )
        package var output: String?
        @Option(
            "format", "format", help: "html, csv or json (default: the output file's extension, else html).",
            .choice)
        package var format: Format?

        package init() {}
    }
}
