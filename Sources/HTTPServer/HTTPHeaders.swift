/// HTTP header fields in order, with case-insensitive lookup; a name may repeat (Set-Cookie).
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields as received or to be sent, in order.
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of `name` (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        let key = name.lowercased()
        return fields.first { $0.name.lowercased() == key }?.value
    }

    /// All values of `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        let key = name.lowercased()
        return fields.filter { $0.name.lowercased() == key }.map(\.value)
    }

    /// Appends a field, keeping any existing ones of the same name.
    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    /// Replaces every field named `name` (case-insensitive) with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every field named `name` (case-insensitive).
    public mutating func remove(_ name: String) {
        let key = name.lowercased()
        fields.removeAll { $0.name.lowercased() == key }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
