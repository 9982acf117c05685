import CellpathCore

/// Short accessors for reading the API's and cellpath's JSON answers in tests.
extension JSONValue {
    /// Parses a JSON document; throws when it is not JSON (with the text, for the failure message).
    public static func parse(_ text: String) throws -> JSONValue {
        guard let value = parse(Array(text.utf8)) else { throw NotJSON(text: text) }
        return value
    }

    public var string: String? { stringValue }
    public var bool: Bool? { boolValue }
    public var array: [JSONValue]? { arrayValue }

    /// An integer, also from a JSON number written with a fraction.
    public var int: Int? {
        switch self {
        case .int(let value): value
        case .double(let value): Int(value)
        default: nil
        }
    }

    /// A number, written with a fraction or not (JSON writes whole doubles without one).
    public var number: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    /// The keys of an object, in order; none for anything else.
    public var objectKeys: [String] {
        guard case .object(let members) = self else { return [] }
        return members.map(\.0)
    }
}

/// A test expected JSON and got something else.
public struct NotJSON: Error, CustomStringConvertible {
    public var text: String
    public var description: String { "not JSON: \(text.prefix(500))" }
}
