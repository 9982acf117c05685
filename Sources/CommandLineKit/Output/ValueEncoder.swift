import CellpathCore

/// Turns any `Encodable` (a library's report type) into a `Value`, keeping the order in which
/// the type encodes its keys and turning them into snake_case (`daemonPID` → `daemon_pid`), so
/// that its JSON output is stable, follows docs/json.md and goes through the one renderer.
package enum ValueEncoder {
    package static func encode(_ value: some Encodable) throws -> Value {
        let box = Box()
        try value.encode(to: Encoding(box: box, codingPath: []))
        return box.value
    }

    /// `checkID` → `check_id`, `tlsVersion` → `tls_version`, `ipv4Address` → `ipv4_address`:
    /// a word starts at an upper-case letter after a lower-case letter or digit, and at the last
    /// capital of an acronym followed by lower case (`URLPath` → `url_path`).
    package static func snakeCase(_ key: String) -> String {
        let characters = Array(key)
        var out = ""
        for (i, c) in characters.enumerated() {
            if c.isUppercase, i > 0 {
                let previous = characters[i - 1]
                let nextIsLower = i + 1 < characters.count && characters[i + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) {
                    out.append("_")
                }
            }
            out += c.lowercased()
        }
        return out
    }

    /// The fields of a value that encodes as an object.
    package static func record(_ value: some Encodable) throws -> Record {
        guard case .record(let record) = try encode(value) else {
            throw CellpathError(.internalError, "\(type(of: value)) does not encode as an object")
        }
        return record
    }

    /// A mutable node of the value tree being built.
    final class Box {
        /// `keyed` keys are Swift property names (snake_cased on output); `entries` keys are data
        /// (a dictionary's: reasons, names) and are kept as they are.
        enum Content { case single(Value), keyed([(String, Box)]), entries([(String, Box)]), unkeyed([Box]) }
        var content: Content = .single(.null)

        var value: Value {
            switch content {
            case .single(let value): return value
            case .keyed(let fields):
                return .record(
                    Record(
                        fields.map {
                            let key = ValueEncoder.snakeCase($0.0)
                            return Field(key: key, label: key.replacingUnderscores(), value: $0.1.value)
                        }))
            case .entries(let entries):
                return .record(Record(entries.map { Field(key: $0.0, label: $0.0, value: $0.1.value) }))
            case .unkeyed(let items): return .list(items.map(\.value))
            }
        }

        /// The child box for `key`, created on first use.
        func child(_ key: String) -> Box {
            if case .keyed(let fields) = content, let existing = fields.first(where: { $0.0 == key }) {
                return existing.1
            }
            let box = Box()
            if case .keyed(var fields) = content {
                fields.append((key, box))
                content = .keyed(fields)
            } else {
                content = .keyed([(key, box)])
            }
            return box
        }

        func append() -> Box {
            let box = Box()
            if case .unkeyed(var items) = content {
                items.append(box)
                content = .unkeyed(items)
            } else {
                content = .unkeyed([box])
            }
            return box
        }
    }

    struct Encoding: Encoder {
        let box: Box
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            if case .keyed = box.content {} else { box.content = .keyed([]) }
            return KeyedEncodingContainer(Keyed<Key>(box: box, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            if case .unkeyed = box.content {} else { box.content = .unkeyed([]) }
            return Unkeyed(box: box, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            Single(box: box, codingPath: codingPath)
        }
    }

    /// A JSON document from outside (a server's body) as it is: its keys neither renamed nor
    /// reordered, repeated keys kept.
    package static func value(_ json: JSONValue) -> Value {
        switch json {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .int(let number): .int(number)
        case .double(let number): .double(number)
        case .string(let text): .string(text)
        case .array(let items): .list(items.map(value))
        case .object(let members): .record(Record(members.map { Field(key: $0.0, label: $0.0, value: value($0.1)) }))
        }
    }

    /// Encodes a leaf or nested value into `box`.
    static func put(_ value: some Encodable, into box: Box, codingPath: [any CodingKey]) throws {
        switch value {
        case let text as String: box.content = .single(.string(text))
        case let flag as Bool: box.content = .single(.bool(flag))
        case let number as Int: box.content = .single(.int(number))
        case let number as Int32: box.content = .single(.int(Int(number)))
        case let number as Int64: box.content = .single(.int(Int(number)))
        case let number as UInt16: box.content = .single(.int(Int(number)))
        case let number as UInt32: box.content = .single(.int(Int(number)))
        case let number as UInt64: box.content = .single(.int(Int(number)))
        case let number as Double: box.content = .single(.double(number))
        case let json as JSONValue: box.content = .single(ValueEncoder.value(json))
        case let dictionary as any StringKeyedDictionary:
            box.content = .entries(try dictionary.sortedEntries(codingPath: codingPath))
        default: try value.encode(to: Encoding(box: box, codingPath: codingPath))
        }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let box: Box
        var codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { box.child(key.stringValue).content = .single(.null) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try ValueEncoder.put(value, into: box.child(key.stringValue), codingPath: codingPath + [key])
        }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            Encoding(box: box.child(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Encoding(box: box.child(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder { Encoding(box: box.child("super"), codingPath: codingPath) }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            Encoding(box: box.child(key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let box: Box
        var codingPath: [any CodingKey]
        var count: Int {
            if case .unkeyed(let items) = box.content { return items.count }
            return 0
        }

        mutating func encodeNil() throws { box.append().content = .single(.null) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            try ValueEncoder.put(value, into: box.append(), codingPath: codingPath)
        }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            Encoding(box: box.append(), codingPath: codingPath).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            Encoding(box: box.append(), codingPath: codingPath).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder { Encoding(box: box.append(), codingPath: codingPath) }
    }

    struct Single: SingleValueEncodingContainer {
        let box: Box
        var codingPath: [any CodingKey]

        mutating func encodeNil() throws { box.content = .single(.null) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            try ValueEncoder.put(value, into: box, codingPath: codingPath)
        }
    }
}

/// A dictionary with `String` keys: its keys are data, so they are output as they are, sorted
/// (a dictionary has no order of its own).
protocol StringKeyedDictionary {
    func sortedEntries(codingPath: [any CodingKey]) throws -> [(String, ValueEncoder.Box)]
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Encodable {
    func sortedEntries(codingPath: [any CodingKey]) throws -> [(String, ValueEncoder.Box)] {
        try keys.sorted().map { key in
            let box = ValueEncoder.Box()
            try ValueEncoder.put(self[key]!, into: box, codingPath: codingPath)
            return (key, box)
        }
    }
}
