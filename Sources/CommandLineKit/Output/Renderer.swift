import Glibc

/// The one place where command output becomes text: human (aligned labels, colour only
/// when enabled, text escaped so that no value can drive the terminal) or JSON (docs/json.md).
package struct Renderer: Sendable {
    package var json: Bool
    package var color: Bool
    /// `--quiet`: human output is the result line alone (the title, when the output has one).
    package var quiet: Bool

    package init(json: Bool, color: Bool, quiet: Bool = false) {
        self.json = json
        self.color = color
        self.quiet = quiet
    }

    /// The text for stdout, ending in a newline.
    package func render(_ output: Output) -> String {
        if json {
            return output.jsonOnOneLine
                ? JSONWriter.line(.record(output.record)) : JSONWriter.string(.record(output.record)) + "\n"
        }
        var lines: [String] = []
        if let title = output.title {
            lines.append(Style.bold.apply(title.terminalSafe, enabled: color))
            if quiet { return lines[0] + "\n" }
        }
        lines += output.humanLines.map { $0.map(\.terminalSafe) } ?? human(output.record, indent: 0)
        lines += output.notes.map(\.terminalSafe)
        return lines.map { $0 + "\n" }.joined()
    }

    /// The text for stderr: the output's details, none with `--quiet` or `--json`.
    package func renderDetails(_ output: Output) -> String {
        guard !json, !quiet else { return "" }
        return output.details.map { $0.terminalSafe + "\n" }.joined()
    }

    private func human(_ record: Record, indent: Int) -> [String] {
        let width = record.fields.map(\.label.terminalSafe.count).max() ?? 0
        let pad = String(repeating: " ", count: indent)
        var lines: [String] = []
        for field in record.fields {
            let name = field.label.terminalSafe
            let label = name + ":" + String(repeating: " ", count: width - name.count + 1)
            switch field.value {
            case .record(let nested) where nested.fields.isEmpty:
                lines.append(pad + Style.dim.apply(label, enabled: color) + "-")
            case .record(let nested):
                lines.append(pad + name + ":")
                lines += human(nested, indent: indent + 2)
            case .list(let items) where table(items) != nil:
                lines.append(pad + name + ":")
                lines += table(items)!.map { pad + "  " + $0 }
            case .list(let items) where items.contains(where: { if case .record = $0 { true } else { false } }):
                lines.append(pad + name + ":")
                for item in items {
                    if case .record(let nested) = item {
                        var itemLines = human(nested, indent: indent + 4)
                        if !itemLines.isEmpty {
                            itemLines[0] = pad + "  - " + itemLines[0].dropFirst(indent + 4)
                        }
                        lines += itemLines
                    } else {
                        lines.append(pad + "  - " + scalar(item))
                    }
                }
            default:
                lines.append(pad + Style.dim.apply(label, enabled: color) + scalar(field.value))
            }
        }
        return lines
    }

    /// Rows of records with the same labels and only scalar values, as an aligned table with
    /// a header; nil when `items` is not such a list.
    private func table(_ items: [Value]) -> [String]? {
        let records = items.compactMap { item -> Record? in
            guard case .record(let record) = item else { return nil }
            return record
        }
        guard records.count == items.count, let first = records.first,
            records.allSatisfy({ $0.fields.map(\.label) == first.fields.map(\.label) }),
            records.allSatisfy({ $0.fields.allSatisfy { !$0.value.isCompound } })
        else { return nil }
        let header = first.fields.map { $0.label.uppercased().terminalSafe }
        let rows = records.map { $0.fields.map { scalar($0.value) } }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            var text = ""
            for (column, cell) in cells.enumerated() {
                text +=
                    column == cells.count - 1
                    ? cell : cell + String(repeating: " ", count: widths[column] - cell.count + 2)
            }
            return text
        }
        return [Style.dim.apply(line(header), enabled: color)] + rows.map(line)
    }

    /// `seconds` since 1970 as `2026-12-01 19:40:12 UTC`.
    package static func utcTime(_ seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "-" }
        var time = time_t(seconds.rounded(.down))
        var fields = tm()
        var text = [CChar](repeating: 0, count: 32)
        guard gmtime_r(&time, &fields) != nil, strftime(&text, text.count, "%Y-%m-%d %H:%M:%S UTC", &fields) > 0 else {
            return "-"
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A share as a percentage with at most one decimal: `100%`, `97.5%`.
    package static func percent(_ share: Double) -> String {
        guard share.isFinite else { return "-" }
        let tenths = (share * 1000).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? "\(Int(tenths / 10))%" : "\(tenths / 10)%"
    }

    /// A single value as human text.
    package func scalar(_ value: Value) -> String {
        switch value {
        case .string(let text): return text.terminalSafe
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        case .time(let seconds): return Self.utcTime(seconds)
        case .fraction(let share): return Self.percent(share)
        case .bool(let flag): return flag ? "yes" : "no"
        case .null: return "-"
        case .list(let items): return items.isEmpty ? "-" : items.map(scalar).joined(separator: ", ")
        case .record(let record): return record.fields.map { "\($0.key)=\(scalar($0.value))" }.joined(separator: " ")
        }
    }
}
