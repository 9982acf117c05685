/// A Codable JSON decoder over `StrictJSONParser`: a document that is not strict JSON is
/// `DecodingError.dataCorrupted` (with the syntax error's line and column); a value of the wrong
/// type is `typeMismatch`, a missing key `keyNotFound` and a null where a value is needed
/// `valueNotFound`, each with its coding path, as Foundation's `JSONDecoder` reports them.
/// Any thread.
public enum JSONDecoding {
    /// The `type` that the UTF-8 JSON document `bytes` holds.
    public static func decode<Value: Decodable>(_ type: Value.Type, from bytes: [UInt8]) throws -> Value {
        let root: JSONNode
        do {
            root = try StrictJSONParser.parse(bytes)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [], debugDescription: "not valid JSON: \(error.message) at \(error.position)",
                    underlyingError: error))
        }
        return try NodeDecoder(node: root, codingPath: []).decodeValue(type)
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ index: Int) { (stringValue, intValue) = ("Index \(index)", index) }
    init(stringValue: String) { (self.stringValue, intValue) = (stringValue, nil) }
    init?(intValue: Int) { self.init(intValue) }
}

extension JSONNode {
    /// What this value is, in a type mismatch's description.
    fileprivate var kindName: String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "dictionary"
        }
    }
}

private struct NodeDecoder: Decoder {
    let node: JSONNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func mismatch(_ type: Any.Type) -> DecodingError {
        if case .null = node.value {
            return .valueNotFound(
                type, .init(codingPath: codingPath, debugDescription: "Expected \(type) value but found null instead."))
        }
        return .typeMismatch(
            type,
            .init(
                codingPath: codingPath,
                debugDescription: "Expected to decode \(type) but found \(node.kindName) instead."))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = node.value else { throw mismatch([String: Any].self) }
        return KeyedDecodingContainer(KeyedNodeContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = node.value else { throw mismatch([Any].self) }
        return UnkeyedNodeContainer(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleNodeContainer(decoder: self) }

    /// This node as `type`: the one place literals become primitives.
    func decodeValue<Value: Decodable>(_ type: Value.Type) throws -> Value {
        switch (type, node.value) {
        case (is String.Type, .string(let text)): return text as! Value
        case (is Bool.Type, .bool(let flag)): return flag as! Value
        case (is Double.Type, .number(let text)): return try number(text, Double.init) as! Value
        case (is Float.Type, .number(let text)): return try number(text, Float.init) as! Value
        case (let integer as any FixedWidthInteger.Type, .number(let text)):
            return try number(text) { integer.init($0) ?? integer.init(exactly: Double($0) ?? .nan) } as! Value
        case (is String.Type, _), (is Bool.Type, _), (is Double.Type, _), (is Float.Type, _),
            (is any FixedWidthInteger.Type, _):
            throw mismatch(type)
        default: return try Value(from: self)
        }
    }

    private func number<Number>(_ text: String, _ make: (String) -> Number?) throws -> Number {
        guard let value = make(text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath, debugDescription: "Number \(text) does not fit in \(Number.self)."))
        }
        return value
    }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [JSONNode.Member]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }
    func contains(_ key: Key) -> Bool { members.contains { $0.key == key.stringValue } }

    private func decoder(_ key: Key) throws -> NodeDecoder {
        guard let member = members.first(where: { $0.key == key.stringValue }) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue).")
            )
        }
        return NodeDecoder(node: member.value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try decoder(key).node.value { true } else { false }
    }

    func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value {
        try decoder(key).decodeValue(type)
    }

    func decodeIfPresent<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decode(type, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { try decoder(Key(stringValue: "super")!) }
    func superDecoder(forKey key: Key) throws -> any Decoder { try decoder(key) }
}

private struct UnkeyedNodeContainer: UnkeyedDecodingContainer {
    let items: [JSONNode]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    init(items: [JSONNode], codingPath: [any CodingKey]) { (self.items, self.codingPath) = (items, codingPath) }

    /// The next element's decoder, the index moved past it.
    private mutating func next(_ type: Any.Type) throws -> NodeDecoder {
        let path = codingPath + [IndexKey(currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: path, debugDescription: "Unkeyed container is at end."))
        }
        defer { currentIndex += 1 }
        return NodeDecoder(node: items[currentIndex], codingPath: path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = items[currentIndex].value else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try next(type).decodeValue(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next([String: Any].self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next([Any].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next(Any.self) }
}

private struct SingleNodeContainer: SingleValueDecodingContainer {
    let decoder: NodeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { if case .null = decoder.node.value { true } else { false } }
    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try decoder.decodeValue(type) }
}
