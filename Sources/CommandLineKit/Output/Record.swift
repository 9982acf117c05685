/// A value in a command's output, rendered as human text or JSON by the one renderer.
package indirect enum Value: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    /// An instant, seconds since 1970: a number in JSON, `2026-12-01 19:40:12 UTC` for people.
    case time(Double)
    /// A share from 0 to 1: a number in JSON (`0.975`), `97.5%` for people.
    case fraction(Double)
    case bool(Bool)
    case null
    case list([Value])
    case record(Record)
}

/// One named field: `key` is the stable JSON key (snake_case), `label` the human label.
package struct Field: Sendable, Equatable {
    package var key: String
    package var label: String
    package var value: Value

    package init(key: String, label: String, value: Value) {
        self.key = key
        self.label = label
        self.value = value
    }
}

/// An ordered set of fields: what a command produces. Field order is kept in both outputs.
package struct Record: Sendable, Equatable {
    package var fields: [Field] = []

    package init(_ fields: [Field] = []) { self.fields = fields }

    /// Appends a field; the human label defaults to the key with spaces.
    package mutating func add(_ key: String, _ value: Value, label: String? = nil) {
        fields.append(Field(key: key, label: label ?? key.replacingUnderscores(), value: value))
    }

    package subscript(key: String) -> Value? { fields.first { $0.key == key }?.value }
}

/// What a command prints: its result on stdout (a title for human output and the record), and
/// for people, how it came about (`details`) on stderr.
package struct Output: Sendable, Equatable {
    /// First line of human output, e.g. `+447940448591: valid mobile number`; not in JSON.
    /// With `--quiet`, the only line of human output.
    package var title: String?
    package var record: Record
    /// Lines printed after the record in human output (e.g. warnings that belong to the result).
    package var notes: [String] = []
    /// Human output written by the command itself (e.g. one line per hop), shown instead of
    /// the record's fields; JSON output is always the record.
    package var humanLines: [String]?
    /// Lines for people about how the result came about (a chain's hops, a check's steps): on
    /// stderr, before the result; not printed with `--quiet` or `--json` (JSON has the record).
    package var details: [String]
    /// With `--json`, the record on one line: the last line of JSON Lines output (field mode).
    package var jsonOnOneLine = false

    package init(
        title: String? = nil, _ record: Record, notes: [String] = [], humanLines: [String]? = nil,
        details: [String] = [],
        jsonOnOneLine: Bool = false
    ) {
        self.title = title
        self.record = record
        self.notes = notes
        self.humanLines = humanLines
        self.details = details
        self.jsonOnOneLine = jsonOnOneLine
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int) { self = .int(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }

    /// True for lists and records.
    package var isCompound: Bool {
        switch self {
        case .list, .record: true
        default: false
        }
    }

    /// `.string` or `.null` from an optional.
    package static func optional(_ text: String?) -> Value { text.map(Value.string) ?? .null }
}

extension String {
    package func replacingUnderscores() -> String {
        String(map { $0 == "_" ? " " : $0 })
    }
}
