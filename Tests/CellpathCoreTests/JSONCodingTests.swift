import CellpathCore
import FoundationEssentials
import Testing

/// A value with every shape the records, HAR and captures hold: nested objects and arrays,
/// empty ones, optionals, keys that sort differently by case and digits, strings to escape.
private struct Sample: Codable, Equatable {
    struct Inner: Codable, Equatable {
        var b: [Int] = []
        var a: [String: Int] = [:]
        var z: Double = 1.0
    }

    var Zeta = "a/b\"\\\n\r\t\u{1}\u{7f}é😀\u{8}\u{c} https://example.com/x?y=1"
    var alpha: Int?
    var beta = 0.1
    var big = 1e20
    var small = 1e-7
    var negative = -2.5
    var whole = 40.0
    var inner = Inner()
    var items = [Inner(b: [1, 2], a: ["k10": 1, "k9": 2, "K1": 3, "_x": 4, "a": 5], z: 3)]
    var flag = true
    var byte: UInt8 = 7
    var single: Float = 1.5
    var large: Int64 = 9_007_199_254_740_993
    var empty: [String: Int] = [:]
    var optional: String? = "x"
    var json = JSONValue.object([("n", .null), ("list", .array([.int(1), .double(2.5), .string("s")]))])
}

@Suite struct JSONEncodingTests {
    /// The formats cellpath writes, each compared with Foundation's bytes.
    @Test(arguments: [
        JSONEncoder.OutputFormatting.sortedKeys, [.sortedKeys, .withoutEscapingSlashes],
        [.prettyPrinted, .sortedKeys], [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    ])
    func writesTheBytesJSONEncoderWrites(_ formatting: JSONEncoder.OutputFormatting) throws {
        let foundation = JSONEncoder()
        foundation.outputFormatting = formatting
        var format: JSONFormat = []
        if formatting.contains(.prettyPrinted) { format.insert(.prettyPrinted) }
        if formatting.contains(.sortedKeys) { format.insert(.sortedKeys) }
        if formatting.contains(.withoutEscapingSlashes) { format.insert(.withoutEscapingSlashes) }
        let expected = String(decoding: try foundation.encode(Sample()), as: UTF8.self)
        #expect(String(decoding: try JSONEncoding.encode(Sample(), format: format), as: UTF8.self) == expected)
    }

    /// Unsorted, keys come in the order they were encoded (Foundation's order is its hash's).
    @Test func unsortedKeysKeepTheirEncodingOrder() throws {
        struct Ordered: Encodable { var zulu = 1, alpha = "a/b", mike: [Int] = [] }
        #expect(
            String(decoding: try JSONEncoding.encode(Ordered()), as: UTF8.self)
                == #"{"zulu":1,"alpha":"a\/b","mike":[]}"#)
    }

    @Test func nonFiniteNumbersAreRefused() {
        #expect(throws: EncodingError.self) { try JSONEncoding.encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try JSONEncoding.encode(["x": Double.infinity]) }
    }
}

@Suite struct JSONDecodingTests {
    /// Unsorted: sorting would reorder the `JSONValue` object's members, which it compares in order.
    @Test func decodesWhatItEncodes() throws {
        let bytes = try JSONEncoding.encode(Sample(), format: [.prettyPrinted])
        #expect(try JSONDecoding.decode(Sample.self, from: bytes) == Sample())
    }

    /// An array for the `JSONValue`: `JSONEncoder` writes an object's members in its hash's order.
    @Test func decodesWhatJSONEncoderWrote() throws {
        var sample = Sample()
        sample.json = .array([.null, .int(1), .double(2.5), .string("s"), .object([("k", .bool(true))])])
        let bytes = Array(try JSONEncoder().encode(sample))
        #expect(try JSONDecoding.decode(Sample.self, from: bytes) == sample)
    }

    private struct File: Decodable {
        struct Credential: Decodable { var client_id: String? }
        var credentials: [Credential]?
        var count: Int
    }

    /// The path of a wrong type, as tru.json's errors name it: `credentials[1].client_id`.
    @Test func aTypeMismatchNamesItsPath() throws {
        let bytes = Array(#"{"count": 1, "credentials": [{"client_id": "a"}, {"client_id": 5}]}"#.utf8)
        do {
            _ = try JSONDecoding.decode(File.self, from: bytes)
            Issue.record("decoded a number as a string")
        } catch DecodingError.typeMismatch(let type, let context) {
            #expect(ObjectIdentifier(type) == ObjectIdentifier(String.self))
            #expect(context.codingPath.map(\.stringValue) == ["credentials", "Index 1", "client_id"])
            #expect(context.codingPath.map(\.intValue) == [nil, 1, nil])
        }
    }

    @Test func missingNullAndMalformedAreTheirOwnErrors() throws {
        #expect {
            try JSONDecoding.decode(File.self, from: Array(#"{"credentials": null}"#.utf8))
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return false }
            return key.stringValue == "count"
        }
        #expect {
            try JSONDecoding.decode(File.self, from: Array(#"{"count": null}"#.utf8))
        } throws: { error in
            guard case DecodingError.valueNotFound = error else { return false }
            return true
        }
        #expect {
            try JSONDecoding.decode(File.self, from: Array(#"{"count": 1,}"#.utf8))
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.debugDescription.contains("1:")
        }
        #expect(throws: DecodingError.self) { try JSONDecoding.decode(File.self, from: Array(#"{"count": 1.5}"#.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoding.decode(UInt8.self, from: Array("256".utf8)) }
        #expect(try JSONDecoding.decode(Int.self, from: Array("4e1".utf8)) == 40)
    }
}

@Suite struct Base64Tests {
    @Test func matchesFoundationForEveryLengthAndByte() {
        for length in 0 ..< 70 {
            let bytes = (0 ..< length).map { UInt8(truncatingIfNeeded: $0 * 37 + length * 11) }
            let expected = Data(bytes).base64EncodedString()
            #expect(Base64.encode(bytes) == expected)
            #expect(Base64.decode(expected) == bytes)
        }
        let all = (0 ... 255).map(UInt8.init)
        #expect(Base64.encode(all) == Data(all).base64EncodedString())
    }

    @Test func refusesWhatIsNotPaddedBase64() {
        for text in ["abc", "ab=c", "a===", "ab!d", "abcd=", "===="] {
            #expect(Base64.decode(text) == nil, "\(text)")
        }
        #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
    }
}

@Suite struct UUIDv4Tests {
    @Test func isARandomVersion4UUIDInLowercase() {
        let ids = (0 ..< 64).map { _ in UUIDv4.random() }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(UUID(uuidString: id)?.uuidString.lowercased() == id)
            let characters = Array(id)
            #expect(characters[14] == "4")
            #expect("89ab".contains(characters[19]))
        }
    }
}
