import FoundationEssentials

/// Just enough JSON to read the API's and cellpath's answers in tests.
public enum JSONAny: Decodable, Sendable, Equatable {
    case string(String), number(Double), bool(Bool), object([String: JSONAny]), array([JSONAny]), null

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let v = try? c.decode(Bool.self) { self = .bool(v) }
        else if let v = try? c.decode(Double.self) { self = .number(v) }
        else if let v = try? c.decode(String.self) { self = .string(v) }
        else if let v = try? c.decode([JSONAny].self) { self = .array(v) }
        else { self = .object(try c.decode([String: JSONAny].self)) }
    }

    /// Parses a JSON document.
    public static func parse(_ text: String) throws -> JSONAny {
        try JSONDecoder().decode(JSONAny.self, from: Data(text.utf8))
    }

    public var string: String? { if case .string(let v) = self { v } else { nil } }
    public var bool: Bool? { if case .bool(let v) = self { v } else { nil } }
    public var number: Double? { if case .number(let v) = self { v } else { nil } }
    public var int: Int? { number.map { Int($0) } }
    public var object: [String: JSONAny]? { if case .object(let v) = self { v } else { nil } }
    public var array: [JSONAny]? { if case .array(let v) = self { v } else { nil } }
    public var isNull: Bool { self == .null }

    /// The member `key` of an object, nil otherwise.
    public subscript(key: String) -> JSONAny? { object?[key] }
}
