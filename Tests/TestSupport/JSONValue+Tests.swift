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
}

/// A test expected JSON and got something else.
public struct NotJSON: Error, CustomStringConvertible {
    public var text: String
    public var description: String { "not JSON: \(text.prefix(500))" }
}
