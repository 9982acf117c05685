import CellpathCore

/// The figures of a report, gathered check by check as the records are read (no record is
/// kept): counts over time, each step's durations, results by modem and by radio context,
/// signal against latency and failures, positions. `figures` then gives the one set of numbers
/// that every rendering (HTML, JSON) shows.
package struct FieldReportAggregator: Sendable {
    /// Results of a set of checks: verdicts, failures and their reasons.
    package struct Counts: Sendable, Equatable {
        package var checks = 0
        package var verified = 0
        package var notVerified = 0
        package var simChanged = 0
        package var failed = 0
        /// Failed checks by reason.
        package var failures: [String: Int] = [:]

        /// Checks that reached a verdict.
        package var concluded: Int { checks - failed }

        /// `concluded / checks`, to three decimals as the field summary rounds it; 0 without checks.
        package var successRate: Double {
            checks == 0 ? 0 : (Double(concluded) / Double(checks) * 1000).rounded() / 1000
        }

        mutating func add(_ record: FieldRecord) {
            checks += 1
            switch record.outcome {
            case "verified": verified += 1
            case "not_verified": notVerified += 1
            case "sim_changed": simChanged += 1
            default:
                failed += 1
                failures[record.failure ?? "unknown", default: 0] += 1
            }
        }
    }

    /// The radio and place dimensions checks are grouped by, beside the modem.
    package enum Dimension: String, Sendable, CaseIterable {
        case modem, `operator`, rat, cell, band

        /// The record's value in this dimension, nil when it does not carry one.
        func key(of record: FieldRecord) -> String? {
            switch self {
            case .modem: record.modemName
            case .operator: record.radio?.operatorName
            case .rat: record.radio?.rat
            case .cell: record.radio?.cellID
            case .band: record.radio?.band
            }
        }
    }

    private(set) var total = Counts()
    private(set) var products: Set<String> = []
    /// Checks by the minute they started in (seconds since 1970 / 60).
    private var byMinute: [Int: Counts] = [:]
    private(set) var untimed = 0
    private(set) var firstStart: Double?
    private(set) var lastStart: Double?
    /// Milliseconds of each step over the checks in which it succeeded; `total` for concluded checks.
    private var durations: [String: [Double]] = [:]
    private var stepOrder: [String] = []
    private var groups: [Dimension: [String: Counts]] = [:]
    /// Checks by RSRP (whole dBm): their counts, and the concluded ones' total durations.
    private var bySignal: [Int: (counts: Counts, totals: [Double])] = [:]
    /// Checks by position, rounded to 4 decimals (about 10 m).
    private var byPlace: [PlaceKey: Counts] = [:]

    package init() {}

    /// Adds one check.
    package mutating func add(_ record: FieldRecord) {
        total.add(record)
        products.insert(record.product)
        if let start = record.startedAt {
            byMinute[Int((start / 60).rounded(.down)), default: Counts()].add(record)
            firstStart = min(firstStart ?? start, start)
            lastStart = max(lastStart ?? start, start)
        } else {
            untimed += 1
        }
        for step in record.steps where step.succeeded { recordDuration(step.name, step.durationMs) }
        if record.outcome != nil, let totalMs = record.totalMs { recordDuration("total", totalMs) }
        for dimension in Dimension.allCases {
            guard let key = dimension.key(of: record) else { continue }
            groups[dimension, default: [:]][key, default: Counts()].add(record)
        }
        if let rsrp = record.radio?.rsrp {
            var entry = bySignal[Int(rsrp.rounded())] ?? (counts: Counts(), totals: [])
            entry.counts.add(record)
            if record.outcome != nil, let totalMs = record.totalMs { entry.totals.append(totalMs) }
            bySignal[Int(rsrp.rounded())] = entry
        }
        if let position = record.position {
            byPlace[PlaceKey(position), default: Counts()].add(record)
        }
    }

    private mutating func recordDuration(_ step: String, _ ms: Double) {
        if durations[step] == nil { stepOrder.append(step) }
        durations[step, default: []].append(ms)
    }

    /// The figures of everything added so far.
    package var figures: ReportFigures {
        ReportFigures(
            total: total, products: products.sorted(), firstStart: firstStart, lastStart: lastStart,
            untimed: untimed, timeline: timeline,
            steps: stepOrder.map { ReportFigures.StepFigures(step: $0, durations: durations[$0] ?? []) },
            groups: Dimension.allCases.compactMap { dimension in
                guard let keyed = groups[dimension] else { return nil }
                // Modems by index (`modem 2` before `modem 10`: shorter first), the others most checks first.
                let ordered = keyed.sorted {
                    dimension == .modem
                        ? ($0.key.count, $0.key) < ($1.key.count, $1.key)
                        : ($0.value.checks, $1.key) > ($1.value.checks, $0.key)
                }
                return ReportFigures.Grouping(dimension: dimension, groups: ordered.map { ($0.key, $0.value) })
            },
            signal: bySignal.sorted { $0.key < $1.key }.map {
                ReportFigures.SignalBin(
                    rsrp: $0.key, counts: $0.value.counts,
                    medianTotalMs: $0.value.totals.isEmpty ? nil : Quantile.nearestRank($0.value.totals.sorted(), 0.5))
            },
            places: byPlace.sorted { ($0.key.lat, $0.key.lon) < ($1.key.lat, $1.key.lon) }.map {
                ReportFigures.Place(
                    lat: Double($0.key.lat) / 10_000, lon: Double($0.key.lon) / 10_000, counts: $0.value)
            })
    }

    /// The bucket widths the timeline may use (seconds), finest first.
    static let bucketWidths = [60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 86400, 7 * 86400]
    /// The most buckets a timeline has: the finest width that stays within it is taken.
    static let maximumBuckets = 120

    /// The minutes merged into buckets of the finest width that keeps them within `maximumBuckets`.
    private var timeline: ReportFigures.Timeline {
        guard let first = byMinute.keys.min(), let last = byMinute.keys.max() else {
            return ReportFigures.Timeline(bucketSeconds: 60, buckets: [])
        }
        let width =
            Self.bucketWidths.first { (last * 60 / $0) - (first * 60 / $0) < Self.maximumBuckets }
            ?? Self.bucketWidths.last!
        var buckets: [Int: Counts] = [:]
        for (minute, counts) in byMinute {
            let start = minute * 60 / width * width
            var merged = buckets[start] ?? Counts()
            merged.merge(counts)
            buckets[start] = merged
        }
        return ReportFigures.Timeline(
            bucketSeconds: width, buckets: buckets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }
}

extension FieldReportAggregator.Counts {
    mutating func merge(_ other: Self) {
        checks += other.checks
        verified += other.verified
        notVerified += other.notVerified
        simChanged += other.simChanged
        failed += other.failed
        failures.merge(other.failures, uniquingKeysWith: +)
    }
}

/// A position rounded to 4 decimals, in ten-thousandths of a degree.
private struct PlaceKey: Hashable, Sendable {
    let lat: Int
    let lon: Int

    init(_ position: FieldRecord.Position) {
        lat = Int((position.lat * 10_000).rounded())
        lon = Int((position.lon * 10_000).rounded())
    }
}
