import CellpathCore

/// Serialises `Value`s as JSON with keys in field order and two-space indentation, so
/// output is stable across runs (docs/json.md).
package enum JSONWriter {
    package static func string(_ value: Value, indent: Int = 0) -> String {
        var out = ""
        write(value, indent: indent, into: &out)
        return out
    }

    /// `value` on one line and a line break: a JSON Lines record (`--watch`, `--repeat`).
    package static func line(_ value: Value) -> String {
        // The writer's lines, joined: JSON strings never hold a raw line break.
        string(value).split(separator: "\n").map { $0.drop { $0 == " " } }.joined() + "\n"
    }

    private static func write(_ value: Value, indent: Int, into out: inout String) {
        switch value {
        case .string(let text): out += quoted(text)
        case .int(let number): out += String(number)
        case .double(let number), .time(let number), .fraction(let number):
            out += number.isFinite ? String(number) : "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .null: out += "null"
        case .list(let items):
            if items.isEmpty { out += "[]"; return }
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += pad(indent + 1)
                write(item, indent: indent + 1, into: &out)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += pad(indent) + "]"
        case .record(let record):
            if record.fields.isEmpty { out += "{}"; return }
            out += "{\n"
            for (i, field) in record.fields.enumerated() {
                out += pad(indent + 1) + quoted(field.key) + ": "
                write(field.value, indent: indent + 1, into: &out)
                out += i == record.fields.count - 1 ? "\n" : ",\n"
            }
            out += pad(indent) + "}"
        }
    }

    private static func pad(_ level: Int) -> String { String(repeating: "  ", count: level) }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    package static func quoted(_ text: String) -> String { JSONValue.quoted(text) }
}
