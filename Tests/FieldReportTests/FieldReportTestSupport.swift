import CellpathCore
import Glibc
import SystemSupport
import TestSupport

@testable import FieldReport

/// Field-mode lines as the check commands write them, for the report's tests.
enum FieldLines {
    /// One check's line: `outcome` nil for a failed run (with `failure`), steps in milliseconds.
    static func check(
        run: Int, modem: Int? = nil, startedAt: Double? = 1_796_097_600, outcome: String? = "verified",
        failure: String? = nil, checkURLMs: Double = 100, totalMs: Double = 400,
        phoneNumber: String = "+••••91", extra: [(String, JSONValue)] = []
    ) -> String {
        var members: [(String, JSONValue)] = []
        if let modem { members.append(("modem", .int(modem))) }
        members.append(("run", .int(run)))
        if let startedAt { members.append(("started_at", .double(startedAt))) }
        members += [
            ("product", .string("subscriber_check")), ("phone_number", .string(phoneNumber)),
            ("backend", .string("tru.ID API https://api.truid.test")),
            ("outcome", outcome.map(JSONValue.string) ?? .null),
            (
                "steps",
                .array([
                    step("path", 150, true), step("create", 120, true),
                    step("check_url", checkURLMs, outcome != nil || failure != "notMobileIP"),
                    step("complete", 80, outcome != nil)
                ])
            ),
            ("total_ms", .double(totalMs)),
            ("path", .object([("interface", .string("wwan0")), ("ipv4_address", .string("100.64.23.10"))])),
            ("unknown_member", .object([("ignored", .bool(true))]))
        ]
        members += extra
        members.append(("failure", failure.map(JSONValue.string) ?? .null))
        members.append(("error", failure.map { .string("the check failed: \($0)") } ?? .null))
        return JSONValue.object(members).serialized
    }

    static func step(_ name: String, _ ms: Double, _ succeeded: Bool) -> JSONValue {
        .object([("step", .string(name)), ("duration_ms", .double(ms)), ("succeeded", .bool(succeeded))])
    }

    /// Reads `text` as a file named `name` through the streaming reader.
    static func read(_ text: String, name: String = "runs.jsonl") throws -> (FieldRunReader.Tally, [FieldRecord]) {
        try TemporaryDirectory.with("cellpath-report") { directory in
            let path = "\(directory)/\(name)"
            try FileSystem.write(Array(text.utf8), to: path)
            let fd = try FileDescriptor.open(path, O_RDONLY)
            var records: [FieldRecord] = []
            let tally = try FieldRunReader.read(fd.rawValue, name: name) { record, _ in records.append(record) }
            return (tally, records)
        }
    }

    /// The figures of `lines`.
    static func figures(_ lines: [String]) throws -> ReportFigures {
        var aggregator = FieldReportAggregator()
        for record in try read(lines.joined(separator: "\n") + "\n").1 { aggregator.add(record) }
        return aggregator.figures
    }
}
