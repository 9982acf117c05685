import CellpathCore
import SystemSupport
import TestSupport
import Testing
import Workflow

@testable import CellpathCLI
@testable import CheckCommands
@testable import CommandLineKit

/// `--records-file` and `--resume`: each run's line appended whole with the run's id, and a run
/// stopped mid-write resumed where it stopped.
@Suite struct FieldRecordsFileTests {
    private static let context = CommandContext.quietSubscriberCheck

    private static let lane = FieldRun.Lane(
        modem: nil,
        once: {
            var report = CheckRunReport(
                product: .subscriberCheck, phoneNumber: "+447940448591", backend: "test", apiVersion: .v0_2)
            report.outcome = .verified
            return report
        }, finally: {})

    /// The file's lines, parsed (a line that is not JSON fails the test).
    private static func lines(_ path: String) throws -> [JSONValue] {
        let text = String(decoding: try FileSystem.read(path), as: UTF8.self)
        #expect(text.hasSuffix("\n"))
        return try text.split(separator: "\n").map { JSONValue(node: try StrictJSONParser.parse(Array($0.utf8))) }
    }

    private static func run(
        _ path: String, runs: Int, resume: Bool, position: GeoPosition? = nil
    ) async throws
        -> CommandOutcome
    {
        let (file, resumed) = try FieldRecordsFile.open(
            path, resume: resume, disclosure: .redacted, as: nil, logger: .silent)
        var recording = FieldRun.Recording(file: file, position: position)
        if let resumed {
            recording.runID = resumed.runID
            recording.lastRun = resumed.lastRun
        }
        let field = FieldRun(
            product: .subscriberCheck, runs: runs, interval: nil, metricsFile: nil, recording: recording,
            context: context)
        return try await field.run([lane])
    }

    @Test func eachRunIsOneLineWithTheRunsIdAndThePosition() async throws {
        let directory = try TemporaryDirectory.make("cellpath-records")
        defer { FileSystem.removeTree(directory) }
        do {
            let path = directory + "/runs.jsonl"
            let outcome = try await Self.run(
                path, runs: 3, resume: false, position: GeoPosition(latitude: 51.5072, longitude: -0.1276))
            let lines = try Self.lines(path)
            #expect(lines.count == 3)
            #expect(lines.map { $0["run"] } == [.int(1), .int(2), .int(3)])
            let runID = try #require(lines[0][string: "run_id"])
            #expect(runID.count == 16)
            #expect(lines.allSatisfy { $0[string: "run_id"] == runID })
            #expect(lines[0]["position"]?["lat"] == .double(51.5072))
            #expect(lines[0]["position"]?["lon"] == .double(-0.1276))
            #expect(outcome.output?.record["run_id"] == .string(runID))
        }
    }

    /// `--location`'s fix is the line's position where the run had one (`source` `gnss`, its
    /// accuracy, fix time and age), `--position`'s where it had none (`source` `fixed`).
    @Test func aRunsGNSSFixIsItsPositionAndThePositionGivenTheFallback() async throws {
        let directory = try TemporaryDirectory.make("cellpath-records")
        defer { FileSystem.removeTree(directory) }
        do {
            let path = directory + "/runs.jsonl"
            let counter = Counter()
            let lane = FieldRun.Lane(
                modem: nil,
                once: {
                    var report = CheckRunReport(
                        product: .subscriberCheck, phoneNumber: "+447940448591", backend: "test", apiVersion: .v0_2)
                    report.outcome = .verified
                    report.location =
                        await counter.next() == 1
                        ? GNSSFix.reading(
                            latitude: 48.8584, longitude: 2.2945, accuracyMeters: 8, fixTime: 1_764_756_000,
                            now: 1_764_756_002.5)
                        : .noFix("no position report within 5.0 seconds")
                    return report
                }, finally: {})
            let (file, _) = try FieldRecordsFile.open(
                path, resume: false, disclosure: .redacted, as: nil, logger: .silent)
            let recording = FieldRun.Recording(file: file, position: GeoPosition(latitude: 51.5, longitude: -0.12))
            _ = try await FieldRun(
                product: .subscriberCheck, runs: 2, interval: nil, metricsFile: nil, recording: recording,
                context: Self.context
            ).run([lane])
            let lines = try Self.lines(path)
            #expect(lines.allSatisfy { $0.objectKeys.prefix(4) == ["run_id", "run", "started_at", "position"] })
            let gnss = try #require(lines[0]["position"])
            #expect(gnss.objectKeys == ["lat", "lon", "source", "accuracy_m", "fix_time", "age_s"])
            #expect(gnss["lat"] == .double(48.8584))
            #expect(gnss[string: "source"] == "gnss")
            #expect(gnss["accuracy_m"]?.number == 8)
            #expect(gnss["fix_time"]?.number == 1_764_756_000)
            #expect(gnss["age_s"] == .double(2.5))
            let fixed = try #require(lines[1]["position"])
            #expect(fixed.objectKeys == ["lat", "lon", "source"])
            #expect(fixed["lat"] == .double(51.5))
            #expect(fixed[string: "source"] == "fixed")
        }
    }

    /// Counts the runs of a lane.
    private actor Counter {
        private var count = 0
        func next() -> Int {
            count += 1
            return count
        }
    }

    /// A power loss mid-write leaves half a line: the resumed run cuts it off, keeps the run's
    /// id and goes on from the last whole record up to the count asked.
    @Test func aResumedRunCutsAPartialLineAndContinuesTheCount() async throws {
        let directory = try TemporaryDirectory.make("cellpath-records")
        defer { FileSystem.removeTree(directory) }
        do {
            let path = directory + "/runs.jsonl"
            _ = try await Self.run(path, runs: 2, resume: false)
            let before = try FileSystem.read(path)
            try FileSystem.write(before + Array(#"{"run_id":"0123","product":"subscr"#.utf8), to: path)
            let outcome = try await Self.run(path, runs: 5, resume: true)
            let lines = try Self.lines(path)
            #expect(lines.map { $0["run"] } == [.int(1), .int(2), .int(3), .int(4), .int(5)])
            #expect(Set(lines.compactMap { $0[string: "run_id"] }).count == 1)
            #expect(outcome.output?.record["runs"] == .int(3))
            #expect(outcome.output?.record["run_id"] == lines[0][string: "run_id"].map { .string($0) })
        }
    }

    /// A record whole but for its newline (the power went between the two) is kept and ended.
    @Test func aLastRecordWithoutItsNewlineIsKeptAndEnded() async throws {
        let directory = try TemporaryDirectory.make("cellpath-records")
        defer { FileSystem.removeTree(directory) }
        do {
            let path = directory + "/runs.jsonl"
            _ = try await Self.run(path, runs: 2, resume: false)
            try FileSystem.write(try FileSystem.read(path).dropLast(), to: path)
            _ = try await Self.run(path, runs: 3, resume: true)
            #expect(try Self.lines(path).map { $0["run"] } == [.int(1), .int(2), .int(3)])
        }
    }

    @Test func aFinishedRunResumedRunsNothingMore() async throws {
        let directory = try TemporaryDirectory.make("cellpath-records")
        defer { FileSystem.removeTree(directory) }
        do {
            let path = directory + "/runs.jsonl"
            _ = try await Self.run(path, runs: 2, resume: false)
            let outcome = try await Self.run(path, runs: 2, resume: true)
            #expect(try Self.lines(path).count == 2)
            #expect(outcome.output?.record["runs"] == .int(0))
        }
    }

    /// Without --resume a second run appends with an id of its own.
    @Test func anotherRunAppendsWithItsOwnID() async throws {
        let directory = try TemporaryDirectory.make("cellpath-records")
        defer { FileSystem.removeTree(directory) }
        do {
            let path = directory + "/runs.jsonl"
            _ = try await Self.run(path, runs: 1, resume: false)
            _ = try await Self.run(path, runs: 1, resume: false)
            let lines = try Self.lines(path)
            #expect(lines.map { $0["run"] } == [.int(1), .int(1)])
            #expect(lines[0]["run_id"] != lines[1]["run_id"])
        }
    }

    @Test func resumeNeedsARecordsFile() throws {
        let parsed = try CommandLineParser(root: CommandTree.root).parse([
            "subscriber-check", "+447940448591", "--repeat", "3", "--resume"
        ])
        guard case .run(_, let invocation) = parsed else {
            Issue.record("not a command to run")
            return
        }
        let options = try invocation.options(as: DeviceCheckOptions.self)
        #expect(throws: UsageError.self) { try CheckCommands.checkFieldOptions(options.field, Self.context) }
    }
}
