import CellpathCore

/// The numbers of a report, computed once (`FieldReportAggregator.figures`) and rendered as JSON
/// (`json`: `--format json`) and as the HTML page's charts, which read that same JSON.
package struct ReportFigures: Sendable {
    /// Checks per time bucket.
    package struct Timeline: Sendable {
        package var bucketSeconds: Int
        /// Each bucket's start (seconds since 1970) and its checks, in time order.
        package var buckets: [(start: Int, counts: FieldReportAggregator.Counts)]
    }

    /// One step's durations: quantiles, a histogram and the cumulative distribution.
    package struct StepFigures: Sendable {
        package var step: String
        package var count: Int
        package var p50: Double
        package var p95: Double
        package var p99: Double
        package var min: Double
        package var max: Double
        /// `histogramBins` bins of equal width from `min` to `max`: each bin's lower bound and count.
        package var histogram: [(fromMs: Double, count: Int)]
        package var binWidthMs: Double
        /// At most `cdfPoints` points `(ms, share of durations ≤ ms)`, the last at `max`.
        package var cdf: [(ms: Double, fraction: Double)]

        static let histogramBins = 20
        static let cdfPoints = 100

        init(step: String, durations: [Double]) {
            let sorted = durations.sorted()
            self.step = step
            count = sorted.count
            p50 = sorted.isEmpty ? 0 : Quantile.nearestRank(sorted, 0.5)
            p95 = sorted.isEmpty ? 0 : Quantile.nearestRank(sorted, 0.95)
            p99 = sorted.isEmpty ? 0 : Quantile.nearestRank(sorted, 0.99)
            min = sorted.first ?? 0
            max = sorted.last ?? 0
            let span = max - min
            binWidthMs = span > 0 ? span / Double(Self.histogramBins) : 1
            var counts = [Int](repeating: 0, count: span > 0 ? Self.histogramBins : 1)
            for value in sorted {
                counts[Swift.min(counts.count - 1, Int((value - min) / binWidthMs))] += 1
            }
            let lower = min, width = binWidthMs
            histogram = counts.enumerated().map { (lower + Double($0.offset) * width, $0.element) }
            let points = Swift.min(Self.cdfPoints, sorted.count)
            cdf = (0 ..< points).map { index in
                let rank = points == sorted.count ? index + 1 : (index + 1) * sorted.count / points
                return (sorted[rank - 1], Double(rank) / Double(sorted.count))
            }
        }
    }

    /// The checks grouped by one dimension (modem, operator, …), in display order.
    package struct Grouping: Sendable {
        package var dimension: FieldReportAggregator.Dimension
        package var groups: [(key: String, counts: FieldReportAggregator.Counts)]
    }

    /// The checks made at one RSRP (whole dBm).
    package struct SignalBin: Sendable {
        package var rsrp: Int
        package var counts: FieldReportAggregator.Counts
        /// The median total duration of the concluded ones; nil when none concluded.
        package var medianTotalMs: Double?
    }

    /// The checks made at one place (rounded to 4 decimals).
    package struct Place: Sendable {
        package var lat: Double
        package var lon: Double
        package var counts: FieldReportAggregator.Counts
    }

    package var total: FieldReportAggregator.Counts
    package var products: [String]
    package var firstStart: Double?
    package var lastStart: Double?
    /// Checks whose record has no start time (left out of the timeline).
    package var untimed: Int
    package var timeline: Timeline
    package var steps: [StepFigures]
    /// Only the dimensions some record carries.
    package var groups: [Grouping]
    package var signal: [SignalBin]
    package var places: [Place]

    /// The grouping by `dimension`, when any record carries it.
    package func grouping(_ dimension: FieldReportAggregator.Dimension) -> Grouping? {
        groups.first { $0.dimension == dimension }
    }
}

extension ReportFigures {
    /// The figures as `--format json` writes them (docs/report.md lists the members).
    package var json: JSONValue {
        .object([
            ("checks", .int(total.checks)),
            ("concluded", .int(total.concluded)),
            ("success_rate", .double(total.successRate)),
            ("outcomes", Self.outcomes(total)),
            ("failures", Self.failures(total)),
            ("products", .array(products.map(JSONValue.string))),
            ("first_started_at", firstStart.map(JSONValue.double) ?? .null),
            ("last_started_at", lastStart.map(JSONValue.double) ?? .null),
            ("untimed_checks", .int(untimed)),
            (
                "timeline",
                .object([
                    ("bucket_seconds", .int(timeline.bucketSeconds)),
                    (
                        "buckets",
                        .array(
                            timeline.buckets.map { bucket in
                                .object([
                                    ("start", .int(bucket.start)), ("checks", .int(bucket.counts.checks)),
                                    ("concluded", .int(bucket.counts.concluded)),
                                    ("success_rate", .double(bucket.counts.successRate))
                                ])
                            })
                    )
                ])
            ),
            ("steps", .array(steps.map(Self.step))),
            (
                "groups",
                .object(
                    groups.map { grouping in
                        (
                            grouping.dimension.rawValue,
                            .array(
                                grouping.groups.map { group in
                                    .object(
                                        [("key", .string(group.key))] + Self.countMembers(group.counts))
                                })
                        )
                    })
            ),
            (
                "signal",
                .array(
                    signal.map { bin in
                        .object(
                            [
                                ("rsrp_dbm", .int(bin.rsrp)), ("checks", .int(bin.counts.checks)),
                                ("failed", .int(bin.counts.failed)),
                                ("failure_rate", .double(Self.rate(bin.counts.failed, bin.counts.checks))),
                                ("median_total_ms", bin.medianTotalMs.map(JSONValue.double) ?? .null)
                            ])
                    })
            ),
            (
                "positions",
                .array(
                    places.map { place in
                        .object(
                            [
                                ("lat", .double(place.lat)), ("lon", .double(place.lon)),
                                ("checks", .int(place.counts.checks)), ("failed", .int(place.counts.failed))
                            ])
                    })
            )
        ])
    }

    private static func step(_ step: StepFigures) -> JSONValue {
        .object([
            ("step", .string(step.step)), ("count", .int(step.count)),
            ("p50_ms", .double(step.p50)), ("p95_ms", .double(step.p95)), ("p99_ms", .double(step.p99)),
            ("min_ms", .double(step.min)), ("max_ms", .double(step.max)),
            ("bin_width_ms", .double(step.binWidthMs)),
            (
                "histogram",
                .array(step.histogram.map { .object([("from_ms", .double($0.fromMs)), ("count", .int($0.count))]) })
            ),
            ("cdf", .array(step.cdf.map { .object([("ms", .double($0.ms)), ("fraction", .double($0.fraction))]) }))
        ])
    }

    private static func countMembers(_ counts: FieldReportAggregator.Counts) -> [(String, JSONValue)] {
        [
            ("checks", .int(counts.checks)), ("concluded", .int(counts.concluded)),
            ("success_rate", .double(counts.successRate)), ("outcomes", outcomes(counts)),
            ("failures", failures(counts))
        ]
    }

    private static func outcomes(_ counts: FieldReportAggregator.Counts) -> JSONValue {
        .object([
            ("verified", .int(counts.verified)), ("not_verified", .int(counts.notVerified)),
            ("sim_changed", .int(counts.simChanged)), ("failed", .int(counts.failed))
        ])
    }

    /// `{reason, count}`, most frequent first, as the field summary orders them.
    private static func failures(_ counts: FieldReportAggregator.Counts) -> JSONValue {
        .array(
            counts.failures.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
                .object([("reason", .string($0.key)), ("count", .int($0.value))])
            })
    }

    private static func rate(_ part: Int, _ whole: Int) -> Double {
        whole == 0 ? 0 : (Double(part) / Double(whole) * 1000).rounded() / 1000
    }
}
