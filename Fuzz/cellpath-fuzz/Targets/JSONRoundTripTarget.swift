import CellpathCore

/// The project's JSON (`StrictJSONParser`, `JSONValue`): whatever parses serialises to JSON that
/// parses again to the same value, with object members in the same order, and serialising that
/// gives the same text (a fixed point after one round).
enum JSONRoundTripTarget: FuzzTarget {
    static let name = "json"

    static func run(_ input: [UInt8]) {
        guard let value = JSONValue.parse(input) else { return }
        let text = value.serialized
        guard let again = JSONValue.parse(Array(text.utf8)) else {
            require(false, "the serialisation of a parsed document does not parse: \(shown(text))")
            return
        }
        require(sameValue(value, again), "parse → serialise → parse changed the value: \(shown(text))")
        require(
            again.serialized == text, "serialising twice is not stable: \(shown(text)) then \(shown(again.serialized))")
    }

    /// Equal values with the same member order and the same Unicode scalars in every string
    /// (Swift's `==` on strings is canonical equivalence; the round trip must keep the bytes).
    /// A double that does not fit (1e999) is written as null, as JSON has no infinity.
    static func sameValue(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.double(let x), .null) where !x.isFinite: true
        case (.string(let x), .string(let y)): x.unicodeScalars.elementsEqual(y.unicodeScalars)
        case (.array(let x), .array(let y)): x.count == y.count && zip(x, y).allSatisfy { sameValue($0, $1) }
        case (.object(let x), .object(let y)):
            x.count == y.count
                && zip(x, y).allSatisfy {
                    $0.0.unicodeScalars.elementsEqual($1.0.unicodeScalars) && sameValue($0.1, $1.1)
                }
        default: a == b
        }
    }
}
