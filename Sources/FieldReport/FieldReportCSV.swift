import CellpathCore
import Glibc

/// `--format csv`: one row per check, in the order read, under a header whose columns never
/// change order (RFC 4180: CRLF line ends, a field with a comma, quote or line break quoted,
/// quotes doubled). Text that a spreadsheet would take as a formula (starting with = + - @, a
/// tab or a carriage return, unless it is a signed number such as a phone number) is prefixed
/// with ', so that opening the file runs nothing.
package enum FieldReportCSV {
    /// The steps that have a column, as docs/json.md names them.
    static let stepColumns = ["path", "create", "check_url", "complete", "sim_check"]

    /// The header row.
    package static var header: String {
        line(
            (["modem", "run", "started_at", "product", "phone_number", "outcome", "failure", "failed_step", "error"]
                + stepColumns.map { "\($0)_ms" }
                + [
                    "total_ms", "interface", "ipv4_address", "operator_sent", "radio_operator", "radio_rat",
                    "radio_cell_id", "radio_band", "radio_rsrp_dbm", "lat", "lon", "check_id"
                ]).map(Cell.text))
    }

    /// The row of `record`; the phone number and the address masked unless `disclosure` is `.full`.
    package static func row(_ record: FieldRecord, _ disclosure: Disclosure) -> String {
        var cells: [Cell] = [
            .number(record.modem.map(String.init)), .number(record.run.map(String.init)),
            .text(record.startedAt.map(isoTime) ?? ""), .text(record.product),
            .text(record.phoneNumber.map { PersonalDataMask.mask($0, as: .msisdn, disclosure) } ?? ""),
            .text(record.outcome ?? ""), .text(record.failure ?? ""), .text(record.failedStep ?? ""),
            .text(record.error ?? "")
        ]
        cells += stepColumns.map { name in .number(record.steps.first { $0.name == name }.map { number($0.durationMs) })
        }
        cells += [
            .number(record.totalMs.map(number)), .text(record.interface ?? ""),
            .text(record.ipv4Address.map { PersonalDataMask.mask($0, as: .ipAddress, disclosure) } ?? ""),
            .text(record.operatorSent ?? ""), .text(record.radio?.operatorName ?? ""), .text(record.radio?.rat ?? ""),
            .text(record.radio?.cellID ?? ""), .text(record.radio?.band ?? ""),
            .number(record.radio?.rsrp.map(number)), .number(record.position.map { number($0.lat) }),
            .number(record.position.map { number($0.lon) }), .text(record.checkID ?? "")
        ]
        return line(cells)
    }

    /// A cell: text from a record (quoted and defused as needed) or a number cellpath wrote.
    enum Cell {
        case text(String)
        case number(String?)

        var field: String {
            switch self {
            case .number(let value): return value ?? ""
            case .text(let value):
                // Byte tests: every character looked for is ASCII, so no UTF-8 sequence holds it.
                var text = value
                if let first = text.utf8.first, Self.formulaStarts.contains(first), !Self.isSignedNumber(text) {
                    text = "'" + text
                }
                guard text.utf8.contains(where: Self.needsQuotes.contains) else { return text }
                return "\"" + text.replacingEvery("\"", with: "\"\"") + "\""
            }
        }

        /// The first bytes that make a spreadsheet read a formula: = + - @, tab, carriage return.
        static let formulaStarts: Set<UInt8> = [0x3D, 0x2B, 0x2D, 0x40, 0x09, 0x0D]
        /// The bytes that make a field quoted: comma, quote, line feed, carriage return.
        static let needsQuotes: Set<UInt8> = [0x2C, 0x22, 0x0A, 0x0D]

        /// A sign and digits only (`+447940448591`, `+••••91`, `-95.5`): data, no formula.
        static func isSignedNumber(_ text: String) -> Bool {
            text.count > 1 && text.dropFirst().allSatisfy { $0.isASCII && $0.isNumber || $0 == "." || $0 == "•" }
        }
    }

    static func line(_ cells: [Cell]) -> String {
        var line = ""
        line.reserveCapacity(256)
        for (index, cell) in cells.enumerated() {
            if index > 0 { line += "," }
            line += cell.field
        }
        return line + "\r\n"
    }

    /// A number as JSON wrote it, without a needless `.0`.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// Seconds since 1970 as ISO 8601 UTC to the millisecond (`2026-12-02T15:04:05.123Z`).
    static func isoTime(_ seconds: Double) -> String {
        var time = time_t(seconds.rounded(.down))
        var fields = tm()
        var text = [CChar](repeating: 0, count: 32)
        guard gmtime_r(&time, &fields) != nil, strftime(&text, text.count, "%Y-%m-%dT%H:%M:%S", &fields) > 0 else {
            return number(seconds)
        }
        let millis = Int(((seconds - seconds.rounded(.down)) * 1000).rounded(.down))
        let fraction = String(millis)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "."
            + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }
}

/// Masks personal data taken from records: as `Disclosure.reveal`, and also an address (which
/// `reveal` leaves, for traces), and never a value that is masked already (a record written
/// without `--verbose-full`), so that `+••••91` stays `+••••91`.
package enum PersonalDataMask {
    package static func mask(_ value: String, as kind: PersonalDataKind, _ disclosure: Disclosure) -> String {
        if disclosure == .full || value.contains("•") { return value }
        if kind == .ipAddress { return value.isEmpty ? value : "••••" + value.suffix(2) }
        return disclosure.reveal(value, as: kind)
    }
}
