/// How `JSONEncoding` lays out a document; the same bytes as Foundation's `JSONEncoder` with the
/// same `outputFormatting` (the files and records people and tests read were written by it).
public struct JSONFormat: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Two-space indentation, `"key" : value`, an empty object or array as two line breaks.
    public static let prettyPrinted = JSONFormat(rawValue: 1)
    /// Object keys in the order of their UTF-8 bytes; otherwise in the order they were encoded.
    public static let sortedKeys = JSONFormat(rawValue: 2)
    /// `/` written as is; otherwise as `\/`.
    public static let withoutEscapingSlashes = JSONFormat(rawValue: 4)
}

/// A Codable JSON encoder: any `Encodable` as a UTF-8 JSON document. Numbers as Swift prints
/// them (a whole double without `.0`); a non-finite one is an `EncodingError`. Any thread.
public enum JSONEncoding {
    /// `value` as a JSON document laid out as `format` says (no final line break).
    public static func encode(_ value: some Encodable, format: JSONFormat = []) throws -> [UInt8] {
        let root = EncodedNode()
        try value.encode(to: NodeEncoder(node: root, codingPath: []))
        var out = ""
        root.write(to: &out, format: format, depth: 0)
        return Array(out.utf8)
    }
}

/// A value as it is being encoded: containers add to it until the encoder returns.
final class EncodedNode {
    enum Content {
        case empty
        /// A number, `true`, `false` or `null`, as written.
        case literal(String)
        case string(String)
        case object(keys: [String], members: [String: EncodedNode])
        case array([EncodedNode])
    }

    var content = Content.empty

    /// The member `key` of this object (made one if it is still empty), replacing an earlier one.
    func member(_ key: String) -> EncodedNode {
        var (keys, members) = ([String](), [String: EncodedNode]())
        if case .object(let k, let m) = content { (keys, members) = (k, m) }
        let node = EncodedNode()
        if members.updateValue(node, forKey: key) == nil { keys.append(key) }
        content = .object(keys: keys, members: members)
        return node
    }

    /// A new last element of this array (made one if it is still empty).
    func appended() -> EncodedNode {
        var items: [EncodedNode] = []
        if case .array(let existing) = content { items = existing }
        let node = EncodedNode()
        items.append(node)
        content = .array(items)
        return node
    }

    func makeObject() { if case .object = content {} else { content = .object(keys: [], members: [:]) } }
    func makeArray() { if case .array = content {} else { content = .array([]) } }

    func write(to out: inout String, format: JSONFormat, depth: Int) {
        let pretty = format.contains(.prettyPrinted)
        switch content {
        case .empty: out += pretty ? "{\n\n" + indent(depth) + "}" : "{}"
        case .literal(let text): out += text
        case .string(let text):
            Self.writeString(text, to: &out, escapingSlashes: !format.contains(.withoutEscapingSlashes))
        case .array(let items):
            writeContainer("[", "]", items, to: &out, format: format, depth: depth) { item, out in
                item.write(to: &out, format: format, depth: depth + 1)
            }
        case .object(let keys, let members):
            let ordered =
                format.contains(.sortedKeys) ? keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } : keys
            writeContainer("{", "}", ordered, to: &out, format: format, depth: depth) { key, out in
                Self.writeString(key, to: &out, escapingSlashes: !format.contains(.withoutEscapingSlashes))
                out += pretty ? " : " : ":"
                members[key]!.write(to: &out, format: format, depth: depth + 1)
            }
        }
    }

    private func writeContainer<Element>(
        _ open: String, _ close: String, _ elements: [Element], to out: inout String, format: JSONFormat,
        depth: Int, _ writeElement: (Element, inout String) -> Void
    ) {
        guard format.contains(.prettyPrinted) else {
            out += open
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                writeElement(element, &out)
            }
            out += close
            return
        }
        out += open + "\n"
        if elements.isEmpty { out += "\n" }
        for (index, element) in elements.enumerated() {
            out += indent(depth + 1)
            writeElement(element, &out)
            out += index == elements.count - 1 ? "\n" : ",\n"
        }
        out += indent(depth) + close
    }

    private func indent(_ depth: Int) -> String { String(repeating: "  ", count: depth) }

    /// A string literal as `JSONEncoder` writes it: `\b \f \n \r \t`, other control characters
    /// as `\u00xx`, and `/` as `\/` unless told not to.
    static func writeString(_ text: String, to out: inout String, escapingSlashes: Bool) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/" where escapingSlashes: out += "\\/"
            case "\u{8}": out += "\\b"
            case "\u{c}": out += "\\f"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ index: Int) { (stringValue, intValue) = ("Index \(index)", index) }
    init(stringValue: String) { (self.stringValue, intValue) = (stringValue, nil) }
    init?(intValue: Int) { self.init(intValue) }
}

/// The text of a number, as `JSONEncoder` writes it; a non-finite one cannot be written.
private func numberLiteral<Float: BinaryFloatingPoint & LosslessStringConvertible>(
    _ value: Float, at path: [any CodingKey]
) throws -> String {
    guard value.isFinite else {
        throw EncodingError.invalidValue(
            value, .init(codingPath: path, debugDescription: "Unable to encode \(value) directly in JSON."))
    }
    let text = value.description
    return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
}

private struct NodeEncoder: Encoder {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return UnkeyedNodeContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleNodeContainer(node: node, codingPath: codingPath)
    }
}

/// Encodes one value into `node`: the one place primitives become literals.
private func encodeValue(_ value: some Encodable, into node: EncodedNode, at path: [any CodingKey]) throws {
    switch value {
    case let text as String: node.content = .string(text)
    case let flag as Bool: node.content = .literal(flag ? "true" : "false")
    case let number as Double: node.content = .literal(try numberLiteral(number, at: path))
    case let number as Float: node.content = .literal(try numberLiteral(number, at: path))
    case let number as any BinaryInteger: node.content = .literal(String(number))
    default: try value.encode(to: NodeEncoder(node: node, codingPath: path))
    }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.member(key.stringValue).content = .literal("null") }
    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        try encodeValue(value, into: node.member(key.stringValue), at: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: node.member("super"), codingPath: codingPath + [IndexKey(stringValue: "super")])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var count: Int { if case .array(let items) = node.content { items.count } else { 0 } }

    private var nextPath: [any CodingKey] { codingPath + [IndexKey(count)] }

    mutating func encodeNil() throws { node.appended().content = .literal("null") }
    mutating func encode(_ value: some Encodable) throws {
        let path = nextPath
        try encodeValue(value, into: node.appended(), at: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        return NodeEncoder(node: node.appended(), codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        return NodeEncoder(node: node.appended(), codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        return NodeEncoder(node: node.appended(), codingPath: path)
    }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .literal("null") }
    mutating func encode(_ value: some Encodable) throws { try encodeValue(value, into: node, at: codingPath) }
}
