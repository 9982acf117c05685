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

    /// The run's identity and where its records go (`--records-file`, `--resume`, `--position`).
    package struct Recording: Sendable {
        /// `run_id` in every line: random, or the resumed run's.
        var runID: String
        var file: FieldRecordsFile?
        /// The highest run number already recorded per lane (`modem`): a resumed run goes on after it.
        var lastRun: [Int?: Int]
        var position: GeoPosition?

        init(
            runID: String = RandomBytes.hex(8), file: FieldRecordsFile? = nil, lastRun: [Int?: Int] = [:],
            position: GeoPosition? = nil
        ) {
            self.runID = runID
            self.file = file
            self.lastRun = lastRun
            self.position = position
        }
    }

    let product: CheckProduct
    /// The runs of each lane, a resumed run's counted in.
    let runs: Int
    /// Seconds between the starts of two runs of a lane; nil: one after the other.
    let interval: Double?
    let metricsFile: String?
    let recording: Recording
    let context: CommandContext

    init(
        product: CheckProduct, runs: Int, interval: Double?, metricsFile: String?, recording: Recording = Recording(),
        context: CommandContext
    ) {
        self.product = product
        self.runs = runs
        self.interval = interval
        self.metricsFile = metricsFile
        self.recording = recording
        self.context = context
    }

    /// Runs every lane `runs` times (fewer when cancelled), the lanes in parallel, each lane's
    /// `finally` after its last run; returns the summary. The exit code is the worst of the runs:
    /// a failure's, else 1 when a run was not verified, else 2 when one found the SIM changed.
    /// A metrics file that cannot be written stops the runs: the summary so far, with that error.
    package func run(_ lanes: [Lane]) async throws -> CommandOutcome {
        let summary = SummaryBox(FieldSummary(product: product), records: recording.file)
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
        var record = total.record
        record.fields.insert(Field(key: "run_id", label: "run id", value: .string(recording.runID)), at: 0)
        let output = Output(title: total.title, record, jsonOnOneLine: true)
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
        let first = (recording.lastRun[lane.modem] ?? 0) + 1
        guard first <= runs else {
            context.logger.info(
                "\(lane.modem.map { "modem \($0)" } ?? "this modem"): all \(runs) runs recorded already")
            return
        }
        for index in first ... runs {
            let started = ContinuousClock.now
            let startedAt = WallClock.now
            let report = await lane.once()
            if report.failure?.kind == .cancelled || Task.isCancelled { break }
            var line = try CheckListing.record(report, disclosure)
            line.fields.insert(Field(key: "run", label: "run", value: .int(index)), at: 0)
            line.fields.insert(
                Field(key: "started_at", label: "started", value: .time((startedAt * 1000).rounded() / 1000)), at: 1)
            if let position = recording.position {
                var place = Record()
                place.add("lat", .double(position.latitude))
                place.add("lon", .double(position.longitude))
                line.fields.insert(Field(key: "position", label: "position", value: .record(place)), at: 2)
            }
            if let modem = lane.modem {
                line.fields.insert(Field(key: "modem", label: "modem", value: .int(modem)), at: 0)
            }
            line.fields.insert(Field(key: "run_id", label: "run id", value: .string(recording.runID)), at: 0)
            line.add("failure", .optional(report.failureReason))
            line.add("error", report.failure.map { .string($0.message) } ?? .null)
            let json = JSONWriter.line(.record(line))
            try await summary.add(
                report, modem: lane.modem, record: Array(json.utf8), metricsFile: metricsFile, caller: context.caller)
            if context.global.json {
                Terminal.writeOut(json)
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

/// The summary the lanes add their runs to: of all runs, and of each named modem's; and the
/// records file, one writer at a time.
private actor SummaryBox {
    private(set) var total: FieldSummary
    private var byModem: [Int: FieldSummary] = [:]
    private let records: FieldRecordsFile?

    init(_ total: FieldSummary, records: FieldRecordsFile?) {
        self.total = total
        self.records = records
    }

    /// Adds a run of `modem` (nil: the runs name no modem): appends its `record` line to the
    /// records file, and rewrites the metrics file, as `caller` (mode 0644: node_exporter reads
    /// it): the total, or each modem's summary under its `modem` label.
    func add(
        _ report: CheckRunReport, modem: Int?, record: [UInt8], metricsFile: String?, caller: FileIdentity?
    ) throws(CellpathError) {
        total.add(report)
        try records?.append(record)
        if let modem { byModem[modem, default: FieldSummary(product: total.product, modem: modem)].add(report) }
        guard let metricsFile else { return }
        let summaries = byModem.isEmpty ? [total] : byModem.sorted { $0.key < $1.key }.map(\.value)
        try OutputFile.write(Array(FieldSummary.prometheus(summaries).utf8), to: metricsFile, mode: 0o644, as: caller)
    }
}
