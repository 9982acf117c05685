import CellpathCLI
import CellpathCore
import CommandLineKit
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

        package init(
            modem: Int?, once: @escaping @Sendable () async -> CheckRunReport,
            finally: @escaping @Sendable () async -> Void
        ) {
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
    /// `finally` after its last run; returns the summary. The exit code is the worst of the runs:
    /// a failure's, else 1 when a run was not verified, else 2 when one found the SIM changed.
    /// A metrics file that cannot be written stops the runs: the summary so far, with that error.
    package func run(_ lanes: [Lane]) async throws -> CommandOutcome {
        let summary = SummaryBox(FieldSummary(product: product))
        var stopped: CellpathError?
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in lanes {
                    group.addTask { try await run(lane, into: summary) }
                }
                try await group.waitForAll()
            }
        } catch let error as CellpathError {
            stopped = error
        }
        let total = await summary.total
        let output = Output(title: total.title, total.record, jsonOnOneLine: true)
        if let stopped { return CommandOutcome(output, failure: CommandFailure(stopped)) }
        if Task.isCancelled { return CommandOutcome(output, exitCode: .cancelled) }
        if let failure = total.lastFailure {
            return CommandOutcome(
                output,
                failure: CommandFailure(
                    CellpathError(
                        failure.kind, "\(total.failed) of \(total.runs) runs failed; the last: \(failure.message)",
                        hint: failure.hint)))
        }
        return CommandOutcome(output, exitCode: CheckListing.exitCode(total.worstOutcome))
    }

    /// Runs `lane`, and then its `finally` whatever happened (a metrics file that could not be
    /// written stops the runs, but the bearer is still released).
    private func run(_ lane: Lane, into summary: SummaryBox) async throws {
        do {
            try await runs(of: lane, into: summary)
        } catch {
            await lane.finally()
            throw error
        }
        await lane.finally()
    }

    private func runs(of lane: Lane, into summary: SummaryBox) async throws {
        let disclosure = context.global.disclosure
        for index in 1 ... runs {
            let started = ContinuousClock.now
            let startedAt = WallClock.now
            let report = await lane.once()
            if report.failure?.kind == .cancelled || Task.isCancelled { break }
            try await summary.add(report, modem: lane.modem, metricsFile: metricsFile, caller: context.caller)
            var line = try CheckListing.record(report, disclosure)
            line.fields.insert(Field(key: "run", label: "run", value: .int(index)), at: 0)
            line.fields.insert(
                Field(key: "started_at", label: "started", value: .time((startedAt * 1000).rounded() / 1000)), at: 1)
            if let modem = lane.modem {
                line.fields.insert(Field(key: "modem", label: "modem", value: .int(modem)), at: 0)
            }
            line.add("failure", .optional(report.failureReason))
            line.add("error", report.failure.map { .string($0.message) } ?? .null)
            if context.global.json {
                Terminal.writeOut(JSONWriter.line(.record(line)))
            } else if !context.global.quiet {
                let what = report.outcome.map { $0.summary(product) } ?? "failed: \(report.failure?.message ?? "")"
                let modem = lane.modem.map { "modem \($0) " } ?? ""
                Terminal.writeOut(
                    "\(modem)run \(index)/\(runs): \(what) (\(Int(report.totalMs.rounded())) ms)".terminalSafe + "\n")
            }
            guard index < runs, let interval, interval > 0 else { continue }
            let next = started + .milliseconds(Int(interval * 1000))
            do { try await Task.sleep(until: next, clock: .continuous) } catch { break }
        }
    }
}

/// The summary the lanes add their runs to: of all runs, and of each named modem's.
private actor SummaryBox {
    private(set) var total: FieldSummary
    private var byModem: [Int: FieldSummary] = [:]

    init(_ total: FieldSummary) {
        self.total = total
    }

    /// Adds a run of `modem` (nil: the runs name no modem), and rewrites the metrics file (one
    /// writer at a time), as `caller` (mode 0644: node_exporter reads it): the total, or each
    /// modem's summary under its `modem` label.
    func add(_ report: CheckRunReport, modem: Int?, metricsFile: String?, caller: FileIdentity?) throws(CellpathError) {
        total.add(report)
        if let modem { byModem[modem, default: FieldSummary(product: total.product, modem: modem)].add(report) }
        guard let metricsFile else { return }
        let summaries = byModem.isEmpty ? [total] : byModem.sorted { $0.key < $1.key }.map(\.value)
        try OutputFile.write(Array(FieldSummary.prometheus(summaries).utf8), to: metricsFile, mode: 0o644, as: caller)
    }
}
