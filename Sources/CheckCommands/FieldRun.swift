import CellpathCLI
import CellpathCore
import CommandLineKit
import SystemSupport
import Workflow

/// Field mode (`--repeat N --interval S`, `--metrics-file`, `--modem all`, `--sim-slot all`): runs
/// the check again and again on each lane (a modem, each of its SIMs in turn with its own bearer;
/// the lanes run in parallel), prints one line per run (a JSON line with `--json`), and ends with
/// a summary: success rate, verdict counts, each step's p50/p95/max, failures grouped by reason.
package struct FieldRun {
    /// One modem's runs: its SIMs' one after another (one SIM unless `--sim-slot all`), then
    /// `finally` (the slot the modem was on made active again), cancelled or not.
    package struct Lane: Sendable {
        /// The modem's index, when the runs name it (`--modem all`, `--sim-slot all`).
        package var modem: Int?
        package var sims: [SIM]
        package var finally: @Sendable () async -> Void

        package init(modem: Int?, sims: [SIM], finally: @escaping @Sendable () async -> Void = {}) {
            self.modem = modem
            self.sims = sims
            self.finally = finally
        }

        /// A modem's one SIM (the active slot's): `once` runs a check, `finally` releases the bearer.
        package init(
            modem: Int?, once: @escaping @Sendable () async -> CheckRunReport,
            finally: @escaping @Sendable () async -> Void
        ) {
            self.init(modem: modem, sims: [SIM(slot: nil, work: .runs(once: once, finally: finally))])
        }
    }

    /// One SIM of a lane: its slot (when the runs name it) and its runs, or why it is skipped.
    package struct SIM: Sendable {
        package enum Work: Sendable {
            /// `once` runs a check on this SIM, `finally` releases its bearer.
            case runs(once: @Sendable () async -> CheckRunReport, finally: @Sendable () async -> Void)
            /// The slot holds no SIM that can register (empty, an eSIM without a profile): a line says why.
            case skipped(String)
        }

        package var slot: Int?
        package var work: Work

        package init(slot: Int?, work: Work) {
            self.slot = slot
            self.work = work
        }
    }

    /// What a record's runs are counted by: its `modem` and `slot` (nil when the runs name none).
    package struct LaneKey: Hashable, Sendable {
        package var modem: Int?
        package var slot: Int?
    }

    /// The run's identity and where its records go (`--records-file`, `--resume`, `--position`:
    /// recorded where `--location` found no fix).
    package struct Recording: Sendable {
        /// `run_id` in every line: random, or the resumed run's.
        var runID: String
        var file: FieldRecordsFile?
        /// The highest run number already recorded per lane (`modem`, `slot`): a resumed run goes on after it.
        var lastRun: [LaneKey: Int]
        var position: GeoPosition?

        init(
            runID: String = RandomBytes.hex(8), file: FieldRecordsFile? = nil, lastRun: [LaneKey: Int] = [:],
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

    /// Runs every SIM of every lane `runs` times (fewer when cancelled), the lanes in parallel,
    /// each SIM's `finally` after its last run and each lane's after its last SIM; returns the summary. The exit code is the worst of the runs:
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
        if let sims = await summary.sims { record.add("sims", sims, label: "SIMs") }
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

    /// Runs each of `lane`'s SIMs in turn (a skipped one's line printed instead), each SIM's
    /// `finally` after its runs whatever happened (a metrics file that could not be written stops
    /// the runs, but the bearer is still released), and the lane's `finally` last.
    private func run(_ lane: Lane, into summary: SummaryBox) async throws {
        do {
            for sim in lane.sims {
                if Task.isCancelled { break }
                let key = LaneKey(modem: lane.modem, slot: sim.slot)
                switch sim.work {
                case .skipped(let reason):
                    skipped(key, reason)
                    await summary.skip(key, reason)
                case .runs(let once, let finally):
                    do {
                        try await runs(key, once, into: summary)
                    } catch {
                        await finally()
                        throw error
                    }
                    await finally()
                }
            }
        } catch {
            await lane.finally()
            throw error
        }
        await lane.finally()
    }

    /// The line of a SIM that is not checked: `skipped` and why.
    private func skipped(_ key: LaneKey, _ reason: String) {
        if context.global.json {
            var line = Record()
            line.add("run_id", .string(recording.runID))
            line.add("modem", key.modem.map(Value.int) ?? .null)
            line.add("slot", key.slot.map(Value.int) ?? .null)
            line.add("skipped", .string(reason))
            Terminal.writeOut(JSONWriter.line(.record(line)))
        } else if !context.global.quiet {
            Terminal.writeOut("\(key.name): skipped: \(reason)".terminalSafe + "\n")
        }
    }

    private func runs(
        _ key: LaneKey, _ once: @Sendable () async -> CheckRunReport, into summary: SummaryBox
    ) async throws {
        let disclosure = context.global.disclosure
        let first = (recording.lastRun[key] ?? 0) + 1
        guard first <= runs else {
            context.logger.info("\(key.name): all \(runs) runs recorded already")
            return
        }
        for index in first ... runs {
            let started = ContinuousClock.now
            let startedAt = WallClock.now
            let report = await once()
            if report.failure?.kind == .cancelled || Task.isCancelled { break }
            var line = try CheckListing.record(report, disclosure)
            line.fields.insert(Field(key: "run", label: "run", value: .int(index)), at: 0)
            line.fields.insert(
                Field(key: "started_at", label: "started", value: .time((startedAt * 1000).rounded() / 1000)), at: 1)
            // The GNSS fix where there is one, else `--position`'s: first, with the run's identity.
            line.fields.removeAll { $0.key == "position" }
            if let place = CheckListing.positionValue(report.location?.fix, fixed: recording.position) {
                line.fields.insert(Field(key: "position", label: "position", value: place), at: 2)
            }
            if let slot = key.slot {
                line.fields.insert(Field(key: "slot", label: "SIM slot", value: .int(slot)), at: 0)
            }
            if let modem = key.modem {
                line.fields.insert(Field(key: "modem", label: "modem", value: .int(modem)), at: 0)
            }
            line.fields.insert(Field(key: "run_id", label: "run id", value: .string(recording.runID)), at: 0)
            line.add("failure", .optional(report.failureReason))
            line.add("error", report.failure.map { .string($0.message) } ?? .null)
            let json = JSONWriter.line(.record(line))
            try await summary.add(
                report, lane: key, record: Array(json.utf8), metricsFile: metricsFile, caller: context.caller)
            if context.global.json {
                Terminal.writeOut(json)
            } else if !context.global.quiet {
                let what = report.outcome.map { $0.summary(product) } ?? "failed: \(report.failure?.message ?? "")"
                let name = key.modem == nil && key.slot == nil ? "" : key.name + " "
                Terminal.writeOut(
                    "\(name)run \(index)/\(runs): \(what) (\(Int(report.totalMs.rounded())) ms)".terminalSafe + "\n")
            }
            guard index < runs, let interval, interval > 0 else { continue }
            let next = started + .milliseconds(Int(interval * 1000))
            do { try await Task.sleep(until: next, clock: .continuous) } catch { break }
        }
    }
}

extension FieldRun.LaneKey {
    /// How lines and logs name the lane: `modem 1 slot 2`, `modem 1`, `this modem`.
    var name: String {
        let modem = modem.map { "modem \($0)" } ?? "this modem"
        return slot.map { "\(modem) slot \($0)" } ?? modem
    }
}

/// The summary the lanes add their runs to: of all runs, of each named modem's (each SIM's with
/// `--sim-slot all`), and the SIMs skipped; and the records file, one writer at a time.
private actor SummaryBox {
    private(set) var total: FieldSummary
    private var byLane: [FieldRun.LaneKey: FieldSummary] = [:]
    private var skipped: [FieldRun.LaneKey: String] = [:]
    private let records: FieldRecordsFile?

    init(_ total: FieldSummary, records: FieldRecordsFile?) {
        self.total = total
        self.records = records
    }

    /// Adds a run of `lane` (no modem: the runs name none): appends its `record` line to the
    /// records file, and rewrites the metrics file, as `caller` (mode 0644: node_exporter reads
    /// it): the total, or each modem's (SIM's) summary under its `modem` (and `slot`) label.
    func add(
        _ report: CheckRunReport, lane: FieldRun.LaneKey, record: [UInt8], metricsFile: String?, caller: FileIdentity?
    ) throws(CellpathError) {
        total.add(report)
        try records?.append(record)
        if lane.modem != nil || lane.slot != nil {
            byLane[lane, default: FieldSummary(product: total.product, modem: lane.modem, slot: lane.slot)].add(report)
        }
        guard let metricsFile else { return }
        let summaries = byLane.isEmpty ? [total] : byLane.sorted { $0.key < $1.key }.map(\.value)
        try OutputFile.write(Array(FieldSummary.prometheus(summaries).utf8), to: metricsFile, mode: 0o644, as: caller)
    }

    /// A SIM not checked, and why.
    func skip(_ lane: FieldRun.LaneKey, _ reason: String) { skipped[lane] = reason }

    /// The SIMs side by side (`--sim-slot all`): each slot's operator, runs and verdicts, or why
    /// it was skipped, by modem and slot; nil when the runs named no slots.
    var sims: Value? {
        let keys = Set(byLane.keys.filter { $0.slot != nil }).union(skipped.keys).sorted(by: <)
        guard !keys.isEmpty else { return nil }
        return .list(
            keys.map { key in
                var line =
                    byLane[key]?.simRecord
                    ?? FieldSummary(product: total.product, modem: key.modem, slot: key.slot).simRecord
                line.add("skipped", .optional(skipped[key]))
                return .record(line)
            })
    }
}

extension FieldRun.LaneKey: Comparable {
    /// By modem, then slot; a lane without one first.
    package static func < (a: Self, b: Self) -> Bool {
        (a.modem ?? -1, a.slot ?? -1) < (b.modem ?? -1, b.slot ?? -1)
    }
}
