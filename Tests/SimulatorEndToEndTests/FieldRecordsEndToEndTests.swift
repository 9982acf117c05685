import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// `--records-file`, `--resume` and `--position` on real field runs in a simulated world: a run
/// stopped by Ctrl-C keeps every completed record, a power loss's half line is cut off, the
/// resumed run keeps the run's id and count, and the report reads the positions.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct FieldRecordsEndToEndTests {
    /// The file's lines, each parsed (a line that is not JSON fails the test).
    static func records(_ path: String) throws -> [JSONValue] {
        let text = String(decoding: try FileSystem.read(path), as: UTF8.self)
        #expect(text.isEmpty || text.hasSuffix("\n"), "every record ends its line")
        return try text.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }

    @Test func aRunStoppedByCtrlCAndAPowerLossIsResumedWhereItStopped() throws {
        try SimulatedDevice.with(connect: false) { device in
            let path = "/tmp/\(device.prefix)records.jsonl"
            defer { unlink(path) }
            let check = [
                "subscriber-check", "+447940448591", "-m", "0", "--direct", "--repeat", "6",
                "--records-file", path, "--position", "51.5072,-0.1276"
            ]
            // Ctrl-C in the middle of the runs: exit 130, and every run that ended is in the file.
            let stopped = try ProcessRunner.run(
                [CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path]
                    + check + ["--interval", "1", "--json"],
                environment: [
                    "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
                    "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
                ],
                signals: [(after: 3.5, signal: SIGINT)])
            #expect(stopped.status == 130, "\(stopped.stderr)")
            let kept = try Self.records(path)
            let printed = stopped.stdout.split(separator: "\n").filter { $0.contains("\"run\":") }
            #expect((1 ..< 6).contains(kept.count), "\(kept.count) records after Ctrl-C")
            #expect(kept.count == printed.count, "each run printed is recorded")
            #expect(kept.map { $0["run"]?.int ?? 0 } == Array(1 ... max(kept.count, 1)).prefix(kept.count).map { $0 })
            let runID = try #require(kept.first?["run_id"]?.string)
            #expect(kept.allSatisfy { $0["run_id"]?.string == runID })
            #expect(kept.allSatisfy { $0["position"]?["lat"] == .double(51.5072) })

            // The power goes mid-write: half a line at the end.
            let whole = try FileSystem.read(path)
            try FileSystem.write(whole + Array(#"{"run_id":"\#(runID)","run":"#.utf8), to: path)

            let resumed = try device.cellpath(check + ["--interval", "0", "--resume", "--json"])
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(resumed.stderr.contains("cut off its last line"), "\(resumed.stderr)")
            let all = try Self.records(path)
            #expect(all.map { $0["run"]?.int ?? 0 } == Array(1 ... 6))
            #expect(all.allSatisfy { $0["run_id"]?.string == runID })
            let summary = try JSONValue.parse(String(resumed.stdout.split(separator: "\n").last ?? ""))
            #expect(summary["runs"] == .int(6 - kept.count))
            #expect(summary["run_id"]?.string == runID)

            // The report reads the whole run, and where it was made.
            let report = try CellpathBinary.run(["report", path, "--format", "json"])
            #expect(report.status == 0, "\(report.stderr)")
            #expect(!report.stderr.contains("cut short"), "the half line was cut off: \(report.stderr)")
            let figures = try JSONValue.parse(report.stdout)
            #expect(figures["checks"] == .int(6))
            let place = try #require(figures["positions"]?.array?.first, "\(figures)")
            #expect(place["checks"] == .int(6))
            #expect(place["lat"] == .double(51.5072) && place["lon"] == .double(-0.1276), "\(place)")
        }
    }

    @Test(arguments: ["91,0", "51.5", "nan,0"])
    func aPositionOffTheGlobeIsAUsageError(text: String) throws {
        let result = try CellpathBinary.run(["subscriber-check", "+447940448591", "--position", text])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("invalid position '\(text)' for '--position'"), "\(result.stderr)")
    }
}
