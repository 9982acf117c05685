import CellpathCore

/// A bad field of a scenario: its path (`modems[1].sim.msisdn`) and what is wrong with it.
struct ScenarioProblem: Error, Sendable {
    var field: String
    var problem: String
}

/// Where each field of a scenario document is written (field path → position of its value),
/// so that an error about a field can point at it.
final class FieldPositions {
    private var positions: [String: TextPosition] = [:]

    func record(_ field: String, _ position: TextPosition) { positions[field] = position }

    /// The position of `field`, or of its nearest ancestor that is written in the document
    /// (a default SIM's msisdn points at its modem).
    func position(of field: String) -> TextPosition? {
        var path = Substring(field)
        while !path.isEmpty {
            if let position = positions[String(path)] { return position }
            guard let cut = path.lastIndex(where: { $0 == "." || $0 == "[" }) else { break }
            path = path[..<cut]
        }
        return positions[""]
    }
}

/// Reads one JSON object of a scenario: refuses keys it does not know and values of the wrong
/// type, with the field's path in every problem.
struct ObjectReader {
    let path: String
    private let members: [String: JSONNode]
    private let positions: FieldPositions

    /// Reads `node` as the object at `path` whose allowed keys are `keys`.
    init(_ node: JSONNode, path: String, keys: [String], positions: FieldPositions) throws(ScenarioProblem) {
        self.path = path
        self.positions = positions
        guard case .object(let members) = node.value else {
            throw ScenarioProblem(
                field: path.isEmpty ? "(top level)" : path, problem: "must be an object, got \(node.summary)")
        }
        for member in members where !keys.contains(member.key) {
            positions.record(Self.join(path, member.key), member.keyPosition)
            throw ScenarioProblem(
                field: Self.join(path, member.key),
                problem: "unknown field\(Self.suggestion(for: member.key, in: keys))")
        }
        var byKey: [String: JSONNode] = [:]
        for member in members {
            byKey[member.key] = member.value
            positions.record(Self.join(path, member.key), member.value.position)
        }
        self.members = byKey
    }

    /// The path of member `key`.
    func field(_ key: String) -> String { Self.join(path, key) }

    /// Whether `key` is written (with any value, null included).
    func contains(_ key: String) -> Bool { members[key] != nil }

    /// An integer member (no fraction, no exponent); nil when absent, or null where allowed.
    func int(_ key: String, nullable: Bool = false) throws(ScenarioProblem) -> Int? {
        guard let node = try present(key, nullable: nullable, expected: "an integer") else { return nil }
        guard case .number(let text) = node.value else { throw mismatch(key, "an integer", node) }
        guard text.allSatisfy({ $0 == "-" || $0.isASCII && $0.isNumber }) else {
            throw mismatch(key, "an integer", node)
        }
        guard let value = Int(text) else {
            throw ScenarioProblem(field: field(key), problem: "\(text) is out of range")
        }
        return value
    }

    /// A number member; nil when absent.
    func number(_ key: String) throws(ScenarioProblem) -> Double? {
        guard let node = try present(key, nullable: false, expected: "a number") else { return nil }
        guard case .number(let text) = node.value, let value = Double(text), value.isFinite else {
            throw mismatch(key, "a number", node)
        }
        return value
    }

    /// A boolean member; nil when absent, or null where allowed.
    func bool(_ key: String, nullable: Bool = false) throws(ScenarioProblem) -> Bool? {
        guard let node = try present(key, nullable: nullable, expected: "true or false") else { return nil }
        guard case .bool(let value) = node.value else { throw mismatch(key, "true or false", node) }
        return value
    }

    /// A string member; nil when absent, or null where allowed.
    func string(_ key: String, nullable: Bool = false) throws(ScenarioProblem) -> String? {
        guard let node = try present(key, nullable: nullable, expected: "a string") else { return nil }
        guard case .string(let value) = node.value else { throw mismatch(key, "a string", node) }
        return value
    }

    /// An array of strings; nil when absent or null.
    func strings(_ key: String) throws(ScenarioProblem) -> [String]? {
        guard let node = try present(key, nullable: true, expected: "an array of strings") else { return nil }
        guard case .array(let items) = node.value else { throw mismatch(key, "an array of strings", node) }
        return try items.map { item throws(ScenarioProblem) in
            guard case .string(let text) = item.value else { throw mismatch(key, "an array of strings", item) }
            return text
        }
    }

    /// A string member that names a case of `E`; the problem lists the allowed values. nil when
    /// absent, or null where allowed.
    func choice<E: RawRepresentable & CaseIterable>(
        _ key: String, _: E.Type,
        nullable: Bool = false
    ) throws(ScenarioProblem) -> E? where E.RawValue == String {
        let allowed = "one of " + E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard let node = try present(key, nullable: nullable, expected: allowed) else { return nil }
        guard case .string(let text) = node.value, let value = E(rawValue: text) else {
            throw mismatch(key, allowed, node)
        }
        return value
    }

    /// An object member read by `read`; nil when absent, or null where allowed.
    func object<T>(
        _ key: String, keys: [String], nullable: Bool = false,
        _ read: (ObjectReader) throws(ScenarioProblem) -> T
    ) throws(ScenarioProblem) -> T? {
        guard let node = try present(key, nullable: nullable, expected: "an object") else { return nil }
        return try read(try ObjectReader(node, path: field(key), keys: keys, positions: positions))
    }

    /// An array member whose elements are read by `read` with their index; nil when absent, or null where allowed.
    func array<T>(
        _ key: String, nullable: Bool = false, _ read: (Int, JSONNode, String) throws(ScenarioProblem) -> T
    ) throws(ScenarioProblem) -> [T]? {
        guard let node = try present(key, nullable: nullable, expected: "an array") else { return nil }
        guard case .array(let items) = node.value else { throw mismatch(key, "an array", node) }
        var values: [T] = []
        for (index, item) in items.enumerated() {
            let itemPath = "\(field(key))[\(index)]"
            positions.record(itemPath, item.position)
            values.append(try read(index, item, itemPath))
        }
        return values
    }

    /// Reads an object element of an array (see `array`).
    func element<T>(
        _ node: JSONNode, path: String, keys: [String],
        _ read: (ObjectReader) throws(ScenarioProblem) -> T
    ) throws(ScenarioProblem) -> T {
        try read(try ObjectReader(node, path: path, keys: keys, positions: positions))
    }

    private func present(_ key: String, nullable: Bool, expected: String) throws(ScenarioProblem) -> JSONNode? {
        guard let node = members[key] else { return nil }
        if case .null = node.value {
            if nullable { return nil }
            throw ScenarioProblem(
                field: field(key), problem: "must be \(expected), got null (leave the field out for its default)")
        }
        return node
    }

    private func mismatch(_ key: String, _ expected: String, _ node: JSONNode) -> ScenarioProblem {
        ScenarioProblem(field: field(key), problem: "must be \(expected), got \(node.summary)")
    }

    private static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// ` (did you mean "x"?)` for a key that differs from an allowed one only in case or by
    /// up to two edits; otherwise the list of allowed keys.
    private static func suggestion(for key: String, in keys: [String]) -> String {
        if let close = keys.first(where: { $0.lowercased() == key.lowercased() })
            ?? keys.min(by: { distance($0, key) < distance($1, key) }).flatMap({ distance($0, key) <= 2 ? $0 : nil })
        {
            return " (did you mean \"\(close)\"?)"
        }
        return "; allowed: " + keys.joined(separator: ", ")
    }

    /// Levenshtein distance, for suggestions.
    private static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var row = Array(0 ... b.count)
        for i in 1 ... a.count {
            var diagonal = row[0]
            row[0] = i
            for j in 1 ... b.count {
                let above = row[j]
                row[j] = min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}

extension JSONNode {
    /// What the node is, for "got …" in a problem: the number or string itself (shortened), or its kind.
    var summary: String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let text): return text
        case .string(let s):
            let shown = s.count > 40 ? String(s.prefix(40)) + "…" : s
            return "the string \"\(shown.unicodeScalars.map { $0.value < 0x20 ? "?" : String($0) }.joined())\""
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
