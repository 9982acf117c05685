import CellpathCLI
import CellpathCore
import CommandLineKit
import SystemSupport
import Workflow

/// What many runs of a check came to: outcomes, failures by reason, and each step's timings.
struct FieldSummary {
    let product: CheckProduct
    /// The modem whose runs these are, when the runs name modems (`--modem all`).
    let modem: Int?
    /// The modem's SIM slot whose runs these are, when the runs name slots (`--sim-slot all`).
    let slot: Int?
    private(set) var runs = 0
    private(set) var outcomes: [CheckOutcome: Int] = [:]
    /// Failures by reason (the check_url answer or chain failure, else the error's kind).
    private(set) var failures: [String: Int] = [:]
    private(set) var lastFailure: CellpathError?
    /// Milliseconds of each step, over the runs in which it succeeded; `total` for whole runs.
    private(set) var durations: [String: [Double]] = [:]
    private var stepOrder: [String] = []
    /// Runs and concluded runs per serving network and technology, in the order first seen.
    private(set) var byRadio: [RadioGroup] = []
    /// The radio of the last run that read one: the metrics' signal gauges.
    private(set) var lastRadio: RadioContext?

    /// The runs on one serving network (MCC-MNC) and technology; `unknown` where the run's radio
    /// did not tell, `none` for runs without a radio context.
    struct RadioGroup: Equatable {
        var operatorID: String
        var rat: String
        var runs = 0
        var concluded = 0
    }

    init(product: CheckProduct, modem: Int? = nil, slot: Int? = nil) {
        self.product = product
        self.modem = modem
        self.slot = slot
    }

    var failed: Int { failures.values.reduce(0, +) }

    /// The worst verdict of the runs: not verified, then SIM changed, then verified; nil without one.
    var worstOutcome: CheckOutcome? {
        [CheckOutcome.notVerified, .simChanged, .verified].first { outcomes[$0, default: 0] > 0 }
    }

    mutating func add(_ report: CheckRunReport) {
        runs += 1
        if let outcome = report.outcome { outcomes[outcome, default: 0] += 1 }
        if let failure = report.failure, let reason = report.failureReason {
            failures[reason, default: 0] += 1
            lastFailure = failure
        }
        for step in report.steps where step.succeeded { record(step.step, step.durationMs) }
        if report.failure == nil { record("total", report.totalMs) }
        if report.product != .simCheck { addRadio(report) }
    }

    private mutating func addRadio(_ report: CheckRunReport) {
        let radio = report.radio
        if let radio { lastRadio = radio }
        let operatorID = radio.map { $0.servingOperator?.id ?? "unknown" } ?? "none"
        let rat = radio.map { $0.accessTechnology?.rawValue ?? "unknown" } ?? "none"
        let index =
            byRadio.firstIndex { $0.operatorID == operatorID && $0.rat == rat }
            ?? {
                byRadio.append(RadioGroup(operatorID: operatorID, rat: rat))
                return byRadio.count - 1
            }()
        byRadio[index].runs += 1
        if report.failure == nil { byRadio[index].concluded += 1 }
    }

    private mutating func record(_ step: String, _ ms: Double) {
        if durations[step] == nil { stepOrder.append(step) }
        durations[step, default: []].append(ms)
    }

    /// The `q` quantile (0…1) of `values` by nearest rank.
    static func quantile(_ values: [Double], _ q: Double) -> Double {
        Quantile.nearestRank(values.sorted(), q)
    }

    var title: String {
        let concluded = runs - failed
        return
            "\(product.commandName): \(runs) runs, \(concluded) concluded (\(runs == 0 ? 0 : concluded * 100 / runs)%)"
    }

    /// One SIM's line of the side-by-side comparison (`--sim-slot all`): its modem and slot, the
    /// operator its last run was served by, its runs and verdicts.
    var simRecord: Record {
        var record = Record()
        record.add("modem", modem.map(Value.int) ?? .null)
        record.add("slot", slot.map(Value.int) ?? .null)
        record.add("operator", .optional(lastRadio?.servingOperator?.id))
        record.add("operator_name", .optional(lastRadio?.servingOperator?.name), label: "operator name")
        record.add("runs", .int(runs))
        record.add("concluded", .int(runs - failed))
        for outcome in [CheckOutcome.verified, .notVerified, .simChanged] {
            record.add(outcome.rawValue, .int(outcomes[outcome] ?? 0))
        }
        return record
    }

    var record: Record {
        var record = Record()
        record.add("product", .string(product.rawValue))
        record.add("runs", .int(runs))
        record.add("concluded", .int(runs - failed))
        record.add(
            "success_rate", .fraction(runs == 0 ? 0 : (Double(runs - failed) / Double(runs) * 1000).rounded() / 1000),
            label: "success rate")
        var verdicts = Record()
        for outcome in [CheckOutcome.verified, .notVerified, .simChanged] {
            verdicts.add(outcome.rawValue, .int(outcomes[outcome] ?? 0))
        }
        record.add("outcomes", .record(verdicts))
        record.add(
            "failures",
            .list(
                failures.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }.map {
                    reason, count in
                    var fields = Record()
                    fields.add("reason", .string(reason))
                    fields.add("count", .int(count))
                    return .record(fields)
                }))
        var steps = Record()
        for step in stepOrder {
            let values = durations[step] ?? []
            var fields = Record()
            fields.add("p50_ms", .double(Self.quantile(values, 0.5)), label: "p50 (ms)")
            fields.add("p95_ms", .double(Self.quantile(values, 0.95)), label: "p95 (ms)")
            fields.add("max_ms", .double(values.max() ?? 0), label: "max (ms)")
            steps.add(step, .record(fields), label: step)  // a step is named as in JSON (check_url)
        }
        record.add("steps", .record(steps))
        if product != .simCheck {
            record.add(
                "radio",
                .list(
                    byRadio.map { group in
                        var fields = Record()
                        fields.add("operator", .string(group.operatorID))
                        fields.add("rat", .string(group.rat))
                        fields.add("runs", .int(group.runs))
                        fields.add("concluded", .int(group.concluded))
                        fields.add(
                            "success_rate",
                            .fraction((Double(group.concluded) / Double(group.runs) * 1000).rounded() / 1000),
                            label: "success rate")
                        return .record(fields)
                    }),
                label: "by network")
        }
        return record
    }

    /// `summaries` in Prometheus text exposition format, for node_exporter's textfile collector:
    /// each metric's series grouped under its HELP and TYPE, labelled with the product (and the
    /// modem, for a modem's summary); seconds rounded to the microsecond.
    static func prometheus(_ summaries: [FieldSummary]) -> String {
        var text =
            "# HELP cellpath_check_runs Check runs of the last cellpath field run, by outcome (\"failed\": no verdict).\n"
        text += "# TYPE cellpath_check_runs gauge\n"
        for summary in summaries {
            for outcome in [CheckOutcome.verified, .notVerified, .simChanged] {
                text +=
                    "cellpath_check_runs{\(summary.labels),outcome=\"\(outcome.rawValue)\"} \(summary.outcomes[outcome] ?? 0)\n"
            }
            text += "cellpath_check_runs{\(summary.labels),outcome=\"failed\"} \(summary.failed)\n"
        }
        text += "# HELP cellpath_check_failures Failed runs by reason.\n# TYPE cellpath_check_failures gauge\n"
        for summary in summaries {
            for (reason, count) in summary.failures.sorted(by: { $0.key < $1.key }) {
                text += "cellpath_check_failures{\(summary.labels),reason=\"\(reason)\"} \(count)\n"
            }
        }
        text += "# HELP cellpath_check_step_seconds Duration of each step of the runs that completed it.\n"
        text += "# TYPE cellpath_check_step_seconds summary\n"
        for summary in summaries {
            for step in summary.stepOrder {
                let values = summary.durations[step] ?? []
                let labels = "\(summary.labels),step=\"\(step)\""
                for q in [0.5, 0.95] {
                    text += "cellpath_check_step_seconds{\(labels),quantile=\"\(q)\"} \(seconds(quantile(values, q)))\n"
                }
                text += "cellpath_check_step_seconds_sum{\(labels)} \(seconds(values.reduce(0, +)))\n"
                text += "cellpath_check_step_seconds_count{\(labels)} \(values.count)\n"
            }
        }
        text += radioGauges(summaries)
        text += "# HELP cellpath_check_last_run_timestamp_seconds When the summary was written.\n"
        text += "# TYPE cellpath_check_last_run_timestamp_seconds gauge\n"
        text += "cellpath_check_last_run_timestamp_seconds \(Int(WallClock.now))\n"
        return text
    }

    /// The signal of each summary's last radio context: RSRP and SINR (LTE), labelled with its
    /// serving network and technology; a value the modem did not tell has no series.
    private static func radioGauges(_ summaries: [FieldSummary]) -> String {
        var text = ""
        let gauges: [(name: String, help: String, value: (RadioContext) -> Double?)] = [
            ("cellpath_radio_rsrp_dbm", "RSRP (dBm) of the serving cell at the last run.", \.rsrpDbm),
            ("cellpath_radio_sinr_db", "SINR (dB) of the serving cell at the last run.", \.sinrDb)
        ]
        for gauge in gauges {
            let series = summaries.compactMap { summary -> String? in
                guard let radio = summary.lastRadio, let value = gauge.value(radio) else { return nil }
                let labels =
                    "\(summary.labels),operator=\"\(radio.servingOperator?.id ?? "unknown")\",rat=\"\(radio.accessTechnology?.rawValue ?? "unknown")\""
                return "\(gauge.name){\(labels)} \(value)\n"
            }
            guard !series.isEmpty else { continue }
            text += "# HELP \(gauge.name) \(gauge.help)\n# TYPE \(gauge.name) gauge\n" + series.joined()
        }
        return text
    }

    /// The series' labels: `product="…"`, and `modem="N"` (and `slot="N"`) for a modem's (SIM's) summary.
    private var labels: String {
        "product=\"\(product.rawValue)\"" + (modem.map { ",modem=\"\($0)\"" } ?? "")
            + (slot.map { ",slot=\"\($0)\"" } ?? "")
    }

    /// Milliseconds as seconds, rounded to the microsecond: the quotient of two whole numbers,
    /// so that it prints as `0.0137` rather than `0.013699999999999999`.
    static func seconds(_ ms: Double) -> String {
        String((ms * 1000).rounded() / 1_000_000)
    }
}

extension CheckRunReport {
    /// Why the run failed, as field mode groups failures: the check_url answer or chain failure,
    /// else the error's kind; nil when it did not fail.
    var failureReason: String? {
        failure.map { checkURLFailure?.reason ?? $0.kind.rawValue }
    }
}
