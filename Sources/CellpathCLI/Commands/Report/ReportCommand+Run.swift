import CellpathCore
import CommandLineKit
import FieldReport
import Glibc
import SystemSupport

extension ReportCommand {
    /// Reads every input as a stream into one aggregation (and, for CSV, one row per check as it
    /// is read), then writes the report to `-o` or stdout. Blocking: runs on the main thread.
    package static func run(_ options: Options, _ context: CommandContext) throws -> CommandOutcome {
        let format = try format(options, context)
        if options.runs.filter({ $0 == "-" }).count > 1 {
            throw UsageError("stdin (-) can be read once only", command: context.command)
        }
        if let output = options.output {
            try OutputFile.checkWritable(output, option: "-o", as: context.caller)
        }
        let chartJS = format == .html ? try FieldReportHTML.chartJS() : ""
        let disclosure = context.global.disclosure
        // CSV to stdout goes out as it is read; to a file it is written whole at the end (atomically).
        var csv = FieldReportCSV.header
        var aggregator = FieldReportAggregator()
        var partial: [String] = []
        let names = options.runs.map { $0 == "-" ? "stdin" : $0 }
        for (input, name) in zip(options.runs, names) {
            let descriptor = try open(input, context)
            // CSV rows are built on the threads that parse the lines.
            let row: (@Sendable (FieldRecord) -> String)? =
                format == .csv ? { @Sendable record in FieldReportCSV.row(record, disclosure) } : nil
            let tally = try FieldRunReader.read(descriptor?.rawValue ?? STDIN_FILENO, name: name, rendering: row) {
                record, row throws(CellpathError) in
                aggregator.add(record)
                guard let row else { return }
                csv += row
                if options.output == nil, csv.utf8.count >= 1 << 16 {
                    Terminal.writeOut(csv)
                    csv = ""
                }
            }
            if tally.partialLastLine {
                partial.append(name)
                context.logger.warning("\(name): the last line was cut short (a run stopped before it ended): left out")
            }
        }
        let figures = aggregator.figures
        guard figures.total.checks > 0 else {
            throw CellpathError(
                .dataError, "no check in \(names.joined(separator: ", "))",
                hint: "field runs write one JSON line per check with --repeat N --json")
        }
        let text: String
        switch format {
        case .html:
            text = FieldReportHTML.page(figures, sources: names, chartJS: chartJS)
        case .json: text = figures.json.serialized + "\n"
        case .csv: text = csv
        }
        guard let output = options.output else {
            Terminal.writeOut(text)
            return CommandOutcome()
        }
        try OutputFile.write(
            Array(text.utf8), to: output, mode: disclosure == .full ? 0o600 : 0o644, as: context.caller)
        var record = Record()
        record.add("output", .string(output))
        record.add("format", .string(format.rawValue))
        record.add("checks", .int(figures.total.checks))
        record.add("concluded", .int(figures.total.concluded))
        record.add("success_rate", .fraction(figures.total.successRate), label: "success rate")
        record.add("partial_last_lines", .list(partial.map(Value.string)), label: "cut short")
        return CommandOutcome(
            Output(
                title:
                    "\(output): \(format.rawValue) report of \(figures.total.checks) check\(figures.total.checks == 1 ? "" : "s")",
                record))
    }

    /// `--format`, else `-o`'s extension, else html.
    static func format(_ options: Options, _ context: CommandContext) throws(UsageError) -> Format {
        if let format = options.format { return format }
        guard let output = options.output else { return .html }
        let name = output.split(separator: "/").last.map(String.init) ?? output
        switch name.split(separator: ".").dropFirst().last?.lowercased() {
        case "html", "htm": return .html
        case "csv": return .csv
        case "json": return .json
        default:
            throw UsageError(
                "can't tell the format from -o \(output): name it .html, .csv or .json, or give --format",
                command: context.command)
        }
    }

    /// The input opened with the caller's rights; nil for `-` (stdin).
    private static func open(_ input: String, _ context: CommandContext) throws -> FileDescriptor? {
        if input == "-" { return nil }
        do {
            return try (context.caller ?? .effective).perform { () throws(SystemError) in
                try FileDescriptor.open(input, O_RDONLY)
            }
        } catch {
            throw CellpathError(.noInput, "couldn't read \(input): \(error.reason)")
        }
    }
}
