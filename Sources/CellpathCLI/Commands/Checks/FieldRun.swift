import CellpathCore
import SystemSupport
import Workflow

/// Field mode (`--repeat N --interval S`, `--metrics-file`, `--modem all`): runs the check again
/// and again on each lane (a modem with its own bearer; the lanes run in parallel), prints one
/// line per run (a JSON line with `--json`), and ends with a summary: success rate, verdict
/// counts, each step's p50/p95/max, failures grouped by reason.
package struct FieldRun {
    /// One modem's runs: `once` runs a check, `finally` releases the modem's bearer.
    package struct Lane: Sendable {
        /// The modem's index, when the runs name it (`--modem all`).
        package var modem: Int?
        package var once: @Sendable () async -> CheckRunReport
        package var finally: @Sendable () async -> Void

        package init(modem: Int?, once: @escaping @Sendable () async -> CheckRunReport, finally: @escaping @Sendable () async -> Void) {
            self.modem = modem
            self.once = once
            self.finally = finally
        }
    }

    let product: CheckProduct
    let runs: Int
    /// Seconds between the starts of two runs of a lane; nil: one after the other.
    let interval: Double?
    let metricsFile: String?
    let context: CommandContext

    package init(product: CheckProduct, runs: Int, interval: Double?, metricsFile: String?, context: CommandContext) {
        self.product = product
        self.runs = runs
        self.interval = interval
        self.metricsFile = metricsFile
        self.context = context
    }

    /// Runs every lane `runs` times (fewer when cancelled), the lanes in parallel, each lane's
    /// `finally` after its last run; returns the summary.
    package func run(_ lanes: [Lane]) async throws -> CommandOutcome {
        let summary = SummaryBox(FieldSummary(product: product))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in lanes {
                group.addTask { try await run(lane, into: summary) }
            }
            try await group.waitForAll()
        }
        let total = await summary.value
        let output = Output(title: total.title, total.record)
        if Task.isCancelled { return CommandOutcome(output, exitCode: .cancelled) }
        if let failure = total.lastFailure {
            return CommandOutcome(output, failure: CommandFailure(CellpathError(
                failure.kind, "\(total.failed) of \(total.runs) runs failed; the last: \(failure.message)", hint: failure.hint)))
        }
        return CommandOutcome(output)
    }

    private func run(_ lane: Lane, into summary: SummaryBox) async throws {
        let disclosure = context.global.disclosure
        for index in 1...runs {
            let started = ContinuousClock.now
            let report = await lane.once()
            if report.failure?.kind == .cancelled || Task.isCancelled { break }
            try await summary.add(report, metricsFile: metricsFile, caller: context.caller)
            var line = try CheckListing.record(report, disclosure)
            line.fields.insert(Field(key: "run", label: "run", value: .int(index)), at: 0)
            if let modem = lane.modem { line.fields.insert(Field(key: "modem", label: "modem", value: .int(modem)), at: 0) }
            line.add("error", report.failure.map { .string($0.message) } ?? .null)
            if context.global.json {
                Terminal.writeOut(JSONWriter.line(.record(line)))
            } else if !context.global.quiet {
                let what = report.outcome.map { $0.summary(product) } ?? "failed: \(report.failure?.message ?? "")"
                let modem = lane.modem.map { "modem \($0) " } ?? ""
                Terminal.writeOut("\(modem)run \(index)/\(runs): \(what) (\(Int(report.totalMs.rounded())) ms)".terminalSafe + "\n")
            }
            guard index < runs, let interval else { continue }
            let next = started + .milliseconds(Int(interval * 1000))
            do { try await Task.sleep(until: next, clock: .continuous) } catch { break }
        }
        await lane.finally()
    }
}

/// The summary the lanes add their runs to.
private actor SummaryBox {
    private(set) var value: FieldSummary

    init(_ value: FieldSummary) {
        self.value = value
    }

    /// Adds a run, and rewrites the metrics file with the summary (one writer at a time), as
    /// `caller` (mode 0644: node_exporter reads it).
    func add(_ report: CheckRunReport, metricsFile: String?, caller: FileIdentity?) throws(CellpathError) {
        value.add(report)
        if let metricsFile { try OutputFile.write(Array(value.prometheus.utf8), to: metricsFile, mode: 0o644, as: caller) }
    }
}
