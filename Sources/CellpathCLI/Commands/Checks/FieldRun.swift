import CellpathCore
import SystemSupport
import Workflow

/// Field mode (`--repeat N --interval S`, `--metrics-file`): runs the check again and again,
/// prints one line per run (a JSON line with `--json`), and ends with a summary: success rate,
/// verdict counts, each step's p50/p95/max, failures grouped by reason.
package struct FieldRun {
    package init(product: CheckProduct, runs: Int, interval: Double?, metricsFile: String?, context: CommandContext) {
        self.product = product
        self.runs = runs
        self.interval = interval
        self.metricsFile = metricsFile
        self.context = context
    }

    let product: CheckProduct
    let runs: Int
    /// Seconds between the starts of two runs; nil: one after the other.
    let interval: Double?
    let metricsFile: String?
    let context: CommandContext

    /// Runs `once` `runs` times (fewer when cancelled), then `finally`.
    package func run(_ once: () async -> CheckRunReport, finally: () async -> Void) async throws -> CommandOutcome {
        var summary = FieldSummary(product: product)
        let disclosure = context.global.disclosure
        for index in 1...runs {
            let started = ContinuousClock.now
            let report = await once()
            if report.failure?.kind == .cancelled || Task.isCancelled { break }
            summary.add(report)
            var line = try CheckListing.record(report, disclosure)
            line.fields.insert(Field(key: "run", label: "run", value: .int(index)), at: 0)
            line.add("error", report.failure.map { .string($0.message) } ?? .null)
            if context.global.json {
                Terminal.writeOut(JSONWriter.line(.record(line)))
            } else if !context.global.quiet {
                let what = report.outcome.map { $0.summary(product) } ?? "failed: \(report.failure?.message ?? "")"
                Terminal.writeOut("run \(index)/\(runs): \(what) (\(Int(report.totalMs.rounded())) ms)".terminalSafe + "\n")
            }
            if let metricsFile { try OutputFile.replace(metricsFile, with: Array(summary.prometheus.utf8)) }
            guard index < runs, let interval else { continue }
            let next = started + .milliseconds(Int(interval * 1000))
            do { try await Task.sleep(until: next, clock: .continuous) } catch { break }
        }
        await finally()
        let output = Output(title: summary.title, summary.record)
        if Task.isCancelled { return CommandOutcome(output, exitCode: .cancelled) }
        if let failure = summary.lastFailure { return CommandOutcome(output, failure: CommandFailure(CellpathError(failure.kind, "\(summary.failed) of \(summary.runs) runs failed; the last: \(failure.message)", hint: failure.hint))) }
        return CommandOutcome(output)
    }
}
