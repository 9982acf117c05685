import CellpathCore
import Glibc
import SystemSupport
import TestSupport
import Testing

/// `cellpath report` as a user runs it: inputs from files and stdin, the format from `-o`'s
/// extension, and each kind of bad input with its exit code and a message that quotes no record.
@Suite(.ownThreads) struct ReportCommandEndToEndTests {
    static let check =
        #"{"run":1,"started_at":1796097600.5,"product":"subscriber_check","phone_number":"+447940448591","#
        + #""outcome":"verified","steps":[{"step":"check_url","duration_ms":412.5,"succeeded":true}],"total_ms":700}"#

    @Test func stdinAndFilesAreReadTogetherAndTheFormatFollowsTheExtension() throws {
        try TemporaryDirectory.with("cellpath-report") { directory in
            let file = "\(directory)/runs.jsonl"
            try FileSystem.write(Array((Self.check + "\n" + Self.check + "\n").utf8), to: file)
            let json = try CellpathBinary.run(["report", file, "-", "--format", "json"], stdin: Self.check + "\n")
            #expect(json.status == 0, "\(json.stderr)")
            let figures = try JSONValue.parse(json.stdout)
            #expect(figures["checks"] == .int(3))
            #expect(figures["steps"]?.array?.first?["p50_ms"] == .double(412.5))

            let csv = "\(directory)/runs.csv"
            let written = try CellpathBinary.run(["report", file, "-o", csv, "--json"])
            #expect(written.status == 0, "\(written.stderr)")
            #expect(try JSONValue.parse(written.stdout)["format"]?.string == "csv")
            let rows = String(decoding: try FileSystem.read(csv), as: UTF8.self).split(separator: "\r\n")
            #expect(rows.count == 3 && rows[1].contains(",+••••91,"), "\(rows)")
            let full = try CellpathBinary.run(["report", file, "--format", "csv", "--verbose-full"])
            #expect(full.stdout.contains(",+447940448591,"), "\(full.stdout)")
        }
    }

    @Test func badInputIsAClearErrorWithItsExitCode() throws {
        try TemporaryDirectory.with("cellpath-report") { directory in
            let file = "\(directory)/runs.jsonl"
            let broken = Self.check.replacing(#""outcome""#, with: #"outcome""#)
            try FileSystem.write(Array((Self.check + "\n" + broken + "\n" + Self.check + "\n").utf8), to: file)
            let malformed = try CellpathBinary.run(["report", file, "--format", "json"])
            #expect(malformed.status == 65)
            #expect(
                malformed.stderr.hasPrefix("error: \(file), line 2: not valid JSON (column "), "\(malformed.stderr)")
            #expect(!malformed.stderr.contains("447940448591") && malformed.stdout.isEmpty)

            let missing = try CellpathBinary.run(["report", "\(directory)/none.jsonl", "--format", "json"])
            #expect(missing.status == 66)
            #expect(missing.stderr.hasPrefix("error: couldn't read \(directory)/none.jsonl: "), "\(missing.stderr)")

            let extensionless = try CellpathBinary.run(["report", file, "-o", "\(directory)/report.txt"])
            #expect(extensionless.status == 64)
            #expect(extensionless.stderr.contains("can't tell the format from -o"), "\(extensionless.stderr)")

            let twice = try CellpathBinary.run(["report", "-", "-", "--format", "json"])
            #expect(twice.status == 64 && twice.stderr.contains("stdin (-) can be read once only"), "\(twice.stderr)")

            let empty = try CellpathBinary.run(["report", "-", "--format", "json"], stdin: "\n")
            #expect(empty.status == 65 && empty.stderr.hasPrefix("error: no check in stdin"), "\(empty.stderr)")
        }
    }
}
