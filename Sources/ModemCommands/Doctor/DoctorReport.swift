import CommandLineKit

/// One finding of `cellpath doctor`: what was checked, how it went, what shows it, and what to do.
package struct DoctorCheck: Sendable, Equatable {
    /// How a check went; the report's status is the worst of its checks.
    package enum Status: String, Sendable, Comparable, CaseIterable {
        case pass, skip, warn, fail

        package static func < (a: Status, b: Status) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

    /// The check's stable name (docs/json.md): `modem`, `owners`, `rp_filter`, …
    package var name: String
    /// The modem it is about, nil for the machine's checks.
    package var modem: Int?
    package var status: Status
    package var summary: String
    /// What was read that shows the result (masked unless --verbose-full).
    package var evidence: [String] = []
    /// What to do about a warning or failure.
    package var remedy: String?
    /// What `--fix` changed for it.
    package var fixed: String?

    package init(
        _ name: String, modem: Int? = nil, _ status: Status, _ summary: String, evidence: [String] = [],
        remedy: String? = nil
    ) {
        self.name = name
        self.modem = modem
        self.status = status
        self.summary = summary
        self.evidence = evidence
        self.remedy = remedy
    }
}

/// Every check of one `doctor` run, rendered as JSON (docs/json.md, `cellpath doctor`) and for people.
package struct DoctorReport: Sendable, Equatable {
    package var checks: [DoctorCheck]

    package init(_ checks: [DoctorCheck]) { self.checks = checks }

    /// The worst status of the checks: pass, warn or fail (skipped checks count as none).
    package var status: DoctorCheck.Status { checks.map(\.status).filter { $0 != .skip }.max() ?? .pass }

    /// Exit 0 unless a check failed; then 1 (`ExitCode.notVerified`: checked, not as it should be).
    package var exitCode: ExitCode { status == .fail ? .notVerified : .success }

    package func count(_ status: DoctorCheck.Status) -> Int { checks.count { $0.status == status } }

    /// `{"status", "counts", "checks": [...]}`; humans get one block per check.
    package var output: Output {
        var record = Record()
        record.add("status", .string(status.rawValue))
        var counts = Record()
        for status in DoctorCheck.Status.allCases { counts.add(status.rawValue, .int(count(status))) }
        record.add("counts", .record(counts))
        record.add(
            "checks",
            .list(
                checks.map { check in
                    var fields = Record()
                    fields.add("check", .string(check.name))
                    fields.add("modem", check.modem.map(Value.int) ?? .null)
                    fields.add("status", .string(check.status.rawValue))
                    fields.add("summary", .string(check.summary))
                    fields.add("evidence", .list(check.evidence.map(Value.string)))
                    fields.add("remedy", .optional(check.remedy))
                    fields.add("fixed", .optional(check.fixed))
                    return .record(fields)
                }))
        return Output(title: title, record, humanLines: humanLines)
    }

    /// `doctor: 1 failed, 2 warnings, 9 passed`.
    var title: String {
        let parts = [(DoctorCheck.Status.fail, "failed"), (.warn, "warning"), (.pass, "passed"), (.skip, "skipped")]
            .compactMap { status, word -> String? in
                let n = count(status)
                guard n > 0 else { return nil }
                return status == .warn ? "\(n) warning\(n == 1 ? "" : "s")" : "\(n) \(word)"
            }
        return "doctor: " + (parts.isEmpty ? "nothing checked" : parts.joined(separator: ", "))
    }

    /// `FAIL  rp_filter (modem 0)  summary`, then its evidence, remedy and fix, indented.
    var humanLines: [String] {
        checks.flatMap { check -> [String] in
            let name = check.status.rawValue.uppercased()
            let label = name + String(repeating: " ", count: 4 - name.count)
            let subject = check.modem.map { "\(check.name) (modem \($0))" } ?? check.name
            var lines = ["\(label)  \(subject): \(check.summary)"]
            lines += check.evidence.map { "      \($0)" }
            if let remedy = check.remedy { lines.append("      remedy: \(remedy)") }
            if let fixed = check.fixed { lines.append("      fixed: \(fixed)") }
            return lines
        }
    }
}
