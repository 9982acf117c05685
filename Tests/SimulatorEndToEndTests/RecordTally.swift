import CellpathCore
import TestSupport

/// Field-run records counted here, apart from `FieldReport`, as docs/report.md defines the
/// report's figures: a check with an `outcome` concluded, any other failed for its `failure`
/// (`unknown` without one); percentiles by nearest rank over the checks in which a step succeeded.
struct RecordTally: Equatable, CustomStringConvertible {
    var checks = 0
    var verified = 0
    var notVerified = 0
    var simChanged = 0
    var failed = 0
    var failures: [String: Int] = [:]

    var description: String {
        "\(checks) checks: \(verified) verified, \(notVerified) not, \(simChanged) SIM changed, \(failed) failed \(failures)"
    }

    init() {}

    init(_ records: [JSONValue]) {
        for record in records { add(record) }
    }

    /// A group as the report writes it (`{checks, concluded, success_rate, outcomes, failures}`);
    /// nil when its `concluded` or `success_rate` disagree with its own counts.
    init?(report group: JSONValue) {
        checks = group["checks"]?.int ?? -1
        verified = group["outcomes"]?["verified"]?.int ?? -1
        notVerified = group["outcomes"]?["not_verified"]?.int ?? -1
        simChanged = group["outcomes"]?["sim_changed"]?.int ?? -1
        failed = group["outcomes"]?["failed"]?.int ?? -1
        for failure in group["failures"]?.array ?? [] {
            failures[failure["reason"]?.string ?? "?"] = failure["count"]?.int
        }
        guard group["concluded"]?.int == concluded, group["success_rate"]?.number == successRate else { return nil }
    }

    mutating func add(_ record: JSONValue) {
        checks += 1
        switch record["outcome"]?.string {
        case "verified": verified += 1
        case "not_verified": notVerified += 1
        case "sim_changed": simChanged += 1
        default:
            failed += 1
            failures[record["failure"]?.string ?? "unknown", default: 0] += 1
        }
    }

    var concluded: Int { checks - failed }

    /// Three decimals, as the field summary rounds it.
    var successRate: Double { checks == 0 ? 0 : (Double(concluded) / Double(checks) * 1000).rounded() / 1000 }

    /// `[{reason, count}]`, most frequent first, then by reason.
    var failureList: JSONValue {
        .array(
            failures.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
                .object([("reason", .string($0.key)), ("count", .int($0.value))])
            })
    }

    /// The record's key in a report dimension (`modem`, `operator`, `rat`, `cell`, `band`); nil
    /// when it carries none.
    static func key(_ record: JSONValue, _ dimension: String) -> String? {
        if dimension == "modem" { return record["modem"]?.int.map { "modem \($0)" } ?? "this modem" }
        let member = ["operator": "operator", "rat": "rat", "cell": "cell_id", "band": "band"][dimension] ?? dimension
        switch record["radio"]?[member] {
        case .string(let text): return text
        case .int(let number): return String(number)
        default: return nil
        }
    }

    /// The records' tallies by their key in `dimension`.
    static func grouped(_ records: [JSONValue], by dimension: String) -> [String: RecordTally] {
        var groups: [String: RecordTally] = [:]
        for record in records {
            guard let key = key(record, dimension) else { continue }
            groups[key, default: RecordTally()].add(record)
        }
        return groups
    }

    /// The report's groups of a dimension by key (a group whose figures disagree with themselves
    /// is left out, so that the comparison fails).
    static func groups(_ reported: JSONValue?) -> [String: RecordTally] {
        var groups: [String: RecordTally] = [:]
        for group in reported?.array ?? [] {
            guard let key = group["key"]?.string, let tally = RecordTally(report: group) else { continue }
            groups[key] = tally
        }
        return groups
    }

    /// Each step's durations over the checks in which it succeeded, and `total` over the
    /// concluded checks, steps in the order first seen.
    static func durations(_ records: [JSONValue]) -> [(step: String, ms: [Double])] {
        var order: [String] = []
        var durations: [String: [Double]] = [:]
        func add(_ step: String, _ ms: Double) {
            if durations[step] == nil { order.append(step) }
            durations[step, default: []].append(ms)
        }
        for record in records {
            for step in record["steps"]?.array ?? [] where step["succeeded"]?.bool == true {
                if let name = step["step"]?.string, let ms = step["duration_ms"]?.number { add(name, ms) }
            }
            if record["outcome"]?.string != nil, let total = record["total_ms"]?.number { add("total", total) }
        }
        return order.map { ($0, durations[$0]!.sorted()) }
    }

    /// The value at rank ⌈q·n⌉ of `sorted`.
    static func nearestRank(_ sorted: [Double], _ q: Double) -> Double {
        var rank = Int(q * Double(sorted.count))
        if Double(rank) < q * Double(sorted.count) { rank += 1 }
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
