import CellpathCore
import SystemSupport
import TestSupport
import Testing
import Workflow

@testable import CellpathCLI
@testable import CheckCommands
@testable import CommandLineKit

/// `--sim-slot all` in a field run: a modem's SIMs one after another, each line with its `slot`,
/// a slot without a usable SIM said skipped, the SIMs side by side in the summary, the lane's
/// `finally` (the slot switched back) after them even when cancelled, and `--resume` by modem
/// and slot.
@Suite struct SIMSlotFieldRunTests {
    private static let context = CommandContext.quietSubscriberCheck

    /// A run's report: `outcome` on `operatorID`'s network.
    private static func report(_ outcome: CheckOutcome, on operatorID: String) -> CheckRunReport {
        var report = CheckRunReport(
            product: .subscriberCheck, phoneNumber: "+447940448591", backend: "test", apiVersion: .v0_2)
        report.outcome = outcome
        var radio = RadioContext(source: "test")
        radio.servingOperator = NetworkOperator(id: "001-0\(operatorID.last ?? "0")", name: operatorID)
        report.radio = radio
        return report
    }

    /// Counts what ran: each SIM's releases and the lane's end.
    private actor Log {
        var events: [String] = []
        func add(_ event: String) { events.append(event) }
    }

    /// Modem 0: slot 1 verified on operator A, slot 2 an eSIM without a profile, slot 3 not
    /// verified on operator B (`once` cancels the run when `cancelling` is slot 3's).
    private static func lane(_ log: Log, cancelling: Bool = false) -> FieldRun.Lane {
        FieldRun.Lane(
            modem: 0,
            sims: [
                FieldRun.SIM(
                    slot: 1,
                    work: .runs(
                        once: { report(.verified, on: "A1") }, finally: { await log.add("release 1") })),
                FieldRun.SIM(slot: 2, work: .skipped("the eSIM in slot 2 has no enabled profile")),
                FieldRun.SIM(
                    slot: 3,
                    work: .runs(
                        once: {
                            if cancelling { withUnsafeCurrentTask { $0?.cancel() } }
                            return report(.notVerified, on: "B2")
                        }, finally: { await log.add("release 3") }))
            ],
            finally: { await log.add("switched back") })
    }

    private static func run(
        _ lane: FieldRun.Lane, runs: Int, path: String?, resume: Bool = false, metricsFile: String? = nil
    ) async throws
        -> CommandOutcome
    {
        var recording = FieldRun.Recording()
        if let path {
            let (file, resumed) = try FieldRecordsFile.open(
                path, resume: resume, disclosure: .redacted, as: nil, logger: .silent)
            recording.file = file
            if let resumed {
                recording.runID = resumed.runID
                recording.lastRun = resumed.lastRun
            }
        }
        return try await FieldRun(
            product: .subscriberCheck, runs: runs, interval: nil, metricsFile: metricsFile, recording: recording,
            context: context
        ).run([lane])
    }

    private static func lines(_ path: String) throws -> [JSONValue] {
        let text = String(decoding: try FileSystem.read(path), as: UTF8.self)
        return try text.split(separator: "\n").map { JSONValue(node: try StrictJSONParser.parse(Array($0.utf8))) }
    }

    @Test func eachSIMRunsInTurnWithItsSlotAndTheSummaryComparesThem() async throws {
        let directory = try TemporaryDirectory.make("cellpath-slots")
        defer { FileSystem.removeTree(directory) }
        do {
            let path = directory + "/runs.jsonl"
            let log = Log()
            let metrics = directory + "/cellpath.prom"
            let outcome = try await Self.run(Self.lane(log), runs: 2, path: path, metricsFile: metrics)
            let lines = try Self.lines(path)
            let series = String(decoding: try FileSystem.read(metrics), as: UTF8.self)
            #expect(
                series.contains(
                    #"cellpath_check_runs{product="subscriber_check",modem="0",slot="1",outcome="verified"} 2"#))
            #expect(
                series.contains(
                    #"cellpath_check_runs{product="subscriber_check",modem="0",slot="3",outcome="not_verified"} 2"#))
            #expect(
                lines.map { "\($0["modem"]?.int ?? -1)/\($0["slot"]?.int ?? -1)/\($0["run"]?.int ?? -1)" } == [
                    "0/1/1", "0/1/2", "0/3/1", "0/3/2"
                ])
            #expect(await log.events == ["release 1", "release 3", "switched back"])
            guard case .list(let listed) = outcome.output?.record["sims"] else {
                Issue.record("no sims in the summary")
                return
            }
            let sims = listed.compactMap { sim -> Record? in
                if case .record(let record) = sim { return record }
                return nil
            }
            #expect(sims.count == 3)
            #expect(sims[0]["slot"] == .int(1) && sims[0]["operator"] == .string("001-01"))
            #expect(sims[0]["verified"] == .int(2) && sims[0]["not_verified"] == .int(0))
            #expect(sims[1]["slot"] == .int(2) && sims[1]["runs"] == .int(0))
            #expect(sims[1]["skipped"] == .string("the eSIM in slot 2 has no enabled profile"))
            #expect(sims[2]["slot"] == .int(3) && sims[2]["operator"] == .string("001-02"))
            #expect(sims[2]["not_verified"] == .int(2) && sims[2]["skipped"] == .null)
            #expect(outcome.output?.record["runs"] == .int(4))
        }
    }

    /// Ctrl-C on slot 3: its run is not counted, its bearer is released, and the modem still switched back.
    @Test func aCancelledRunStillReleasesAndSwitchesBack() async throws {
        let log = Log()
        let outcome = try await Self.run(Self.lane(log, cancelling: true), runs: 3, path: nil)
        #expect(await log.events == ["release 1", "release 3", "switched back"])
        #expect(outcome.output?.record["runs"] == .int(3))
    }

    /// A resumed run counts each slot's runs apart: slot 3, stopped after its first, goes on.
    @Test func aResumedRunMatchesModemAndSlot() async throws {
        let directory = try TemporaryDirectory.make("cellpath-slots")
        defer { FileSystem.removeTree(directory) }
        do {
            let path = directory + "/runs.jsonl"
            _ = try await Self.run(Self.lane(Log()), runs: 2, path: path)
            let kept = try FileSystem.read(path).split(separator: UInt8(ascii: "\n")).dropLast()
            try FileSystem.write(kept.flatMap { Array($0) + [UInt8(ascii: "\n")] }, to: path)
            let outcome = try await Self.run(Self.lane(Log()), runs: 2, path: path, resume: true)
            let lines = try Self.lines(path)
            #expect(lines.map { "\($0["slot"]?.int ?? -1)/\($0["run"]?.int ?? -1)" } == ["1/1", "1/2", "3/1", "3/2"])
            #expect(outcome.output?.record["runs"] == .int(1))
        }
    }
}
