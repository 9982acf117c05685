import CellpathCore
import Testing

@testable import FieldReport

/// The aggregation: quantiles, groups, time buckets, and the reading of field-mode lines.
@Suite struct FieldReportAggregationTests {
    @Test func stepQuantilesAreNearestRankOverTheSucceededSteps() throws {
        // check_url takes 1…100 ms, written in descending order; one failed run's check_url is left out.
        var lines = (1 ... 100).reversed().map { FieldLines.check(run: 101 - $0, checkURLMs: Double($0)) }
        lines.append(FieldLines.check(run: 101, outcome: nil, failure: "notMobileIP", checkURLMs: 5000))
        let figures = try FieldLines.figures(lines)
        let checkURL = try #require(figures.steps.first { $0.step == "check_url" })
        #expect(checkURL.count == 100)
        #expect([checkURL.p50, checkURL.p95, checkURL.p99, checkURL.min, checkURL.max] == [50, 95, 99, 1, 100])
        #expect(checkURL.histogram.count == ReportFigures.StepFigures.histogramBins)
        #expect(checkURL.histogram.map(\.count).reduce(0, +) == 100)
        #expect(checkURL.cdf.count == 100 && checkURL.cdf.last?.ms == 100 && checkURL.cdf.last?.fraction == 1)
        #expect(checkURL.cdf.first?.ms == 1 && checkURL.cdf.first?.fraction == 0.01)
        // `total` counts only the concluded runs; `complete` failed in the failed one.
        #expect(figures.steps.first { $0.step == "total" }?.count == 100)
        #expect(figures.steps.map(\.step) == ["path", "create", "check_url", "complete", "total"])
        let json = figures.json
        #expect(json["steps"]?.arrayValue?[2]["p99_ms"] == .double(99))
        #expect(json["checks"] == .int(101) && json["concluded"] == .int(100))
        #expect(json["success_rate"] == .double(0.99))
    }

    @Test func checksAreCountedPerModemAndPerRadioContextWithTheirFailureReasons() throws {
        let radioA: [(String, JSONValue)] = [
            (
                "radio",
                .object([
                    ("operator", .string("Vodafone UK")), ("rat", .string("lte")), ("cell_id", .int(1234)),
                    ("band", .string("B20")), ("rsrp_dbm", .int(-95))
                ])
            )
        ]
        let radioB: [(String, JSONValue)] = [
            ("radio", .object([("operator", .string("EE")), ("rat", .string("nr5g")), ("rsrp_dbm", .double(-110.4))]))
        ]
        let lines = [
            FieldLines.check(run: 1, modem: 0, totalMs: 300, extra: radioA),
            FieldLines.check(run: 2, modem: 0, outcome: nil, failure: "notMobileIP", extra: radioA),
            FieldLines.check(run: 1, modem: 1, outcome: "sim_changed", totalMs: 500, extra: radioB),
            FieldLines.check(run: 2, modem: 1, outcome: nil, failure: "temporary", extra: radioB),
            FieldLines.check(run: 3, modem: 1, outcome: nil, failure: "temporary", extra: radioB),
            FieldLines.check(run: 1, modem: 10, outcome: "not_verified")
        ]
        let figures = try FieldLines.figures(lines)
        let modems = try #require(figures.grouping(.modem)).groups
        #expect(modems.map(\.key) == ["modem 0", "modem 1", "modem 10"])
        #expect(modems.map(\.counts.checks) == [2, 3, 1])
        #expect(modems[1].counts.failures == ["temporary": 2])
        #expect(modems[1].counts.simChanged == 1 && modems[2].counts.notVerified == 1)
        let operators = try #require(figures.grouping(.operator)).groups
        #expect(operators.map(\.key) == ["EE", "Vodafone UK"], "most checks first")
        #expect(figures.grouping(.cell)?.groups.map(\.key) == ["1234"], "a whole-number cell id is read as text")
        #expect(figures.grouping(.rat)?.groups.map(\.key) == ["nr5g", "lte"])
        #expect(figures.signal.map(\.rsrp) == [-110, -95])
        #expect(figures.signal.map(\.counts.failed) == [2, 1])
        #expect(figures.signal.map(\.medianTotalMs) == [500, 300])
        #expect(figures.total.failures == ["temporary": 2, "notMobileIP": 1])
        let failures = figures.json["failures"]?.arrayValue?.compactMap { $0[string: "reason"] }
        #expect(failures == ["temporary", "notMobileIP"], "most frequent first")
        #expect(figures.places.isEmpty)
        #expect(FieldReportHTML.notes(figures).contains { $0.contains("position.lat/lon") })
        #expect(!FieldReportHTML.notes(figures).contains { $0.contains("radio.operator") })
    }

    @Test func withoutRadioContextOnlyTheModemGroupingRemainsAndTheNotesSaySo() throws {
        let figures = try FieldLines.figures([FieldLines.check(run: 1), FieldLines.check(run: 2)])
        #expect(figures.groups.map(\.dimension) == [.modem])
        #expect(figures.grouping(.modem)?.groups.map(\.key) == ["this modem"])
        let notes = FieldReportHTML.notes(figures)
        for member in [
            "radio.operator", "radio.rat", "radio.cell_id", "radio.band", "radio.rsrp_dbm", "position.lat/lon"
        ] {
            #expect(notes.contains { $0.contains(member) }, "\(member): \(notes)")
        }
    }

    @Test func checksFallIntoTheFinestTimeBucketsThatKeepTheTimelineShort() throws {
        let start = 1_796_097_600.0  // a whole hour
        let lines = [
            FieldLines.check(run: 1, startedAt: start), FieldLines.check(run: 2, startedAt: start + 30),
            FieldLines.check(run: 3, startedAt: start + 61, outcome: nil, failure: "temporary"),
            FieldLines.check(run: 4, startedAt: start + 3 * 3600),
            FieldLines.check(run: 5, startedAt: nil)
        ]
        let figures = try FieldLines.figures(lines)
        // Three hours of minutes are 180 buckets, more than 120: five-minute buckets.
        #expect(figures.timeline.bucketSeconds == 300)
        #expect(figures.timeline.buckets.map(\.start) == [Int(start), Int(start) + 3 * 3600])
        #expect(figures.timeline.buckets.map(\.counts.checks) == [3, 1])
        #expect(figures.timeline.buckets.map(\.counts.successRate) == [0.667, 1])
        #expect(figures.untimed == 1)
        #expect(figures.firstStart == start && figures.lastStart == start + 3 * 3600)
        // An hour of checks: minute buckets.
        let hour = try FieldLines.figures([
            FieldLines.check(run: 1, startedAt: start), FieldLines.check(run: 2, startedAt: start + 3599)
        ])
        #expect(hour.timeline.bucketSeconds == 60 && hour.timeline.buckets.count == 2)
    }

    @Test func aRecordWithoutStartedAtTakesItsFirstHopsStart() throws {
        let hops: [(String, JSONValue)] = [
            ("check_url", .object([("hops", .array([.object([("started_at", .double(1_796_097_642.5))])]))]))
        ]
        let (_, records) = try FieldLines.read(FieldLines.check(run: 1, startedAt: nil, extra: hops) + "\n")
        #expect(records.first?.startedAt == 1_796_097_642.5)
    }

    @Test func aLastLineCutShortIsLeftOutAndSummariesAreSkipped() throws {
        let summary =
            #"{"product":"subscriber_check","runs":2,"concluded":2,"success_rate":1,"outcomes":{},"failures":[],"steps":{}}"#
        let text = [FieldLines.check(run: 1), FieldLines.check(run: 2), summary].joined(separator: "\n") + "\n"
        let cut = FieldLines.check(run: 3)
        let (tally, records) = try FieldLines.read(text + cut.prefix(cut.count / 2))
        // The whole lines' length is where a resumed run cuts the file.
        #expect(
            tally
                == FieldRunReader.Tally(
                    checks: 2, summaries: 1, partialLastLine: true, wholeLinesLength: text.utf8.count))
        #expect(records.map(\.run) == [1, 2])
        // A whole last line without its newline is read.
        let (whole, _) = try FieldLines.read(text + cut)
        #expect(whole.checks == 3 && !whole.partialLastLine && whole.wholeLinesLength == text.utf8.count)
    }

    @Test func aMalformedLineIsAnErrorNamingTheFileAndLineWithoutQuotingIt() throws {
        let broken = #"{"product":"subscriber_check","phone_number":"+447940448591",,}"#
        let text = [FieldLines.check(run: 1), broken, FieldLines.check(run: 3)].joined(separator: "\n") + "\n"
        let error = try #require(throws: CellpathError.self) { try FieldLines.read(text, name: "night.jsonl") }
        #expect(error.kind == .dataError)
        #expect(error.message.hasPrefix("night.jsonl, line 2: not valid JSON"), "\(error.message)")
        #expect(!error.message.contains("447940448591") && !(error.hint ?? "").contains("447940448591"))
        // JSON that is no field run's line.
        let other = try #require(throws: CellpathError.self) {
            try FieldLines.read(FieldLines.check(run: 1) + "\n\n[1, 2]\n", name: "x.jsonl")
        }
        #expect(other.message == "x.jsonl, line 3: not a field run's record (no product and steps)")
    }

    @Test func linesLongerThanTheReadBufferAreReadWhole() throws {
        let long = String(repeating: "x", count: 200_000)
        let lines = [
            FieldLines.check(run: 1),
            FieldLines.check(run: 2, outcome: nil, failure: "temporary", extra: [("note", .string(long))]),
            FieldLines.check(run: 3)
        ]
        let (tally, records) = try FieldLines.read(lines.joined(separator: "\n") + "\n")
        #expect(tally.checks == 3)
        #expect(records.map(\.run) == [1, 2, 3] && records[1].failure == "temporary")
    }

    /// Lines are parsed in batches on every core: records still come in file order across the
    /// batches, blank lines still count, and the first bad line is named even when later
    /// batches parse fine.
    @Test func recordsComeInFileOrderAcrossParsingBatches() throws {
        let count = FieldRunReader.batchLines * 2 + 37
        var lines = (1 ... count).map { FieldLines.check(run: $0) }
        lines.insert("", at: FieldRunReader.batchLines - 1)
        let (tally, records) = try FieldLines.read(lines.joined(separator: "\n") + "\n")
        #expect(tally.checks == count)
        #expect(records.map(\.run) == Array(1 ... count))
        let badLine = FieldRunReader.batchLines + 5
        lines[badLine - 1] = "{"
        lines[badLine + 3] = "[1]"
        let error = try #require(throws: CellpathError.self) {
            try FieldLines.read(lines.joined(separator: "\n") + "\n", name: "n.jsonl")
        }
        #expect(error.message.hasPrefix("n.jsonl, line \(badLine): not valid JSON"), "\(error.message)")
    }
}
