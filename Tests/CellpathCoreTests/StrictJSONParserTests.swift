import CellpathCore
import Testing

/// The strict JSON parser behind `JSONValue.parse` and the scenario file: what it accepts, what it
/// refuses, and where it says the first error is.
@Suite struct StrictJSONParserTests {
    private func parse(_ text: String) throws(JSONSyntaxError) -> JSONNode {
        try StrictJSONParser.parse(Array(text.utf8))
    }

    /// The error for `bytes`, or nil when they parse.
    private func error(_ bytes: [UInt8]) -> JSONSyntaxError? {
        do { _ = try StrictJSONParser.parse(bytes); return nil } catch { return error }
    }

    private func error(_ text: String) -> JSONSyntaxError? { error(Array(text.utf8)) }

    /// The bytes of a document that is one string literal holding `content`.
    private func stringDocument(_ content: [UInt8]) -> [UInt8] { [0x22] + content + [0x22] }

    // MARK: Numbers

    @Test(arguments: [
        "0", "-0", "7", "-12", "1.5", "-0.25", "1e3", "1E+3", "2e-3", "10.5E10", "123456789012345678901234567890"
    ])
    func numbersKeepTheirText(_ text: String) throws {
        guard case .number(let kept) = try parse(text).value else { Issue.record("\(text) is not a number"); return }
        #expect(kept == text)
    }

    @Test(arguments: [
        "01", "-01", "00", "-", "+1", "1.", ".5", "1.e3", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity"
    ])
    func malformedNumbersAreRefused(_ text: String) {
        #expect(error(text) != nil, "\(text) parsed")
    }

    @Test func leadingZerosAndMissingDigitsAreNamed() {
        #expect(error("01")?.message == "a number must not start with 0 (leading zeros)")
        #expect(error("-")?.message == "a number needs a digit after '-'")
        #expect(error("1.")?.message == "a number needs digits after '.'")
        #expect(error("1e")?.message == "a number needs digits in its exponent")
    }

    @Test func wholeNumbersThatFitAreIntegersAndTheRestDoubles() {
        #expect(JSONValue.parse(Array("40".utf8)) == .int(40))
        #expect(JSONValue.parse(Array("-40".utf8)) == .int(-40))
        #expect(JSONValue.parse(Array("40.5".utf8)) == .double(40.5))
        #expect(JSONValue.parse(Array("4e1".utf8)) == .double(40))
        #expect(JSONValue.parse(Array("9223372036854775807".utf8)) == .int(Int.max))
        #expect(JSONValue.parse(Array("9223372036854775808".utf8)) == .double(9223372036854775808))
    }

    // MARK: Strings and escapes

    @Test func escapesAreDecoded() throws {
        let node = try parse(#""\"\\\/\b\f\n\r\t""#)
        guard case .string(let text) = node.value else { Issue.record("not a string"); return }
        #expect(Array(text.unicodeScalars) == ["\"", "\\", "/", "\u{08}", "\u{0C}", "\n", "\r", "\t"])
    }

    @Test func unicodeEscapesAndSurrogatePairsAreDecoded() throws {
        #expect(JSONValue.parse(Array(#""caf\u00e9""#.utf8)) == .string("café"))
        #expect(JSONValue.parse(Array(#""\u00E9""#.utf8)) == .string("é"))
        #expect(JSONValue.parse(Array(#""\uD83D\uDE00""#.utf8)) == .string("😀"))
        #expect(JSONValue.parse(Array(#""\u0000""#.utf8)) == .string("\u{0}"))
    }

    @Test func loneAndMismatchedSurrogatesAreRefused() {
        #expect(error(#""\uDC00""#)?.message == "a lone low surrogate \\uDC00 in a string")
        #expect(error(#""\uD800""#)?.message == "a high surrogate \\uD800 not followed by a low one")
        #expect(error(#""\uD800x""#)?.message == "a high surrogate \\uD800 not followed by a low one")
        #expect(error(#""\uD800\u0041""#)?.message == "\\u0041 is not a low surrogate")
        #expect(error(#""\uD800\uD800""#)?.message == "\\uD800 is not a low surrogate")
    }

    @Test(arguments: [#""\x""#, #""\u12""#, #""\u12G4""#, #""\'""#, #""\""#, #""abc"#])
    func badEscapesAndUnclosedStringsAreRefused(_ text: String) {
        #expect(error(text) != nil, "\(text) parsed")
    }

    @Test func anInvalidEscapeIsShownAsWritten() {
        #expect(error(#""\x""#)?.message == "invalid escape \\x in a string")
        #expect(error(#""\u12""#)?.message == "\\u needs four hexadecimal digits")
    }

    @Test func controlCharactersInsideStringsAreRefused() {
        #expect(error("\"a\tb\"")?.message.hasPrefix("a tab inside a string") == true)
        #expect(error("\"a\nb\"")?.message.hasPrefix("a line break inside a string") == true)
        #expect(
            error(stringDocument([0x61, 0x01]))?.message.hasPrefix("control character U+0001 inside a string") == true)
        // DEL is not a control character for JSON.
        #expect(JSONValue.parse(stringDocument([0x7F])) == .string("\u{7F}"))
    }

    // MARK: UTF-8

    @Test func wellFormedUTF8IsAccepted() {
        let text = "é€😀 and ascii"
        #expect(JSONValue.parse(stringDocument(Array(text.utf8))) == .string(text))
        // The same after an escape, which takes the parser's scalar-by-scalar path.
        #expect(JSONValue.parse(stringDocument(Array("\\n".utf8) + Array(text.utf8))) == .string("\n" + text))
    }

    /// Truncated sequences, lone continuation bytes, overlong forms, UTF-16 surrogates and code
    /// points beyond U+10FFFF, each with and without an escape before it (both decoding paths).
    @Test(
        arguments: [
            [0xC3], [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE2, 0x82],
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF0, 0x80, 0x80, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF5, 0x80, 0x80, 0x80], [0xFE], [0xFF], [0xC3, 0x41]
        ] as [[UInt8]])
    func illFormedUTF8IsRefused(_ sequence: [UInt8]) {
        let plain = error(stringDocument(sequence))
        #expect(plain?.message.hasPrefix("invalid UTF-8") == true, "\(sequence): \(String(describing: plain))")
        let escaped = error(stringDocument(Array("\\t".utf8) + sequence))
        #expect(escaped?.message.hasPrefix("invalid UTF-8") == true, "\(sequence): \(String(describing: escaped))")
    }

    @Test func aByteOrderMarkIsSkippedAndPositionsCountFromAfterIt() {
        #expect(JSONValue.parse([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == .array([.int(1)]))
        #expect(error([0xEF, 0xBB, 0xBF] + Array("[x]".utf8))?.position.description == "1:2")
    }

    // MARK: Structure

    @Test func objectsKeepTheirMembersInDocumentOrder() throws {
        let value = try #require(JSONValue.parse(Array(#"{"b": 1, "a": [true, false, null], "c": {}}"#.utf8)))
        #expect(
            value == .object([("b", .int(1)), ("a", .array([.bool(true), .bool(false), .null])), ("c", .object([]))]))
        #expect(value.serialized == #"{"b":1,"a":[true,false,null],"c":{}}"#)
    }

    @Test func duplicateKeysAreRefusedWithBothPositions() {
        let duplicate = error(#"{"a": 1, "a": 2}"#)
        #expect(duplicate?.message == #"duplicate key "a" (first at line 1, column 2)"#)
        #expect(duplicate?.position.description == "1:10")
        // Keys are compared after unescaping.
        #expect(error(#"{"a": 1, "\u0061": 2}"#)?.message.hasPrefix(#"duplicate key "a""#) == true)
        // The same key in different objects is fine.
        #expect(JSONValue.parse(Array(#"{"a": {"a": 1}, "b": {"a": 2}}"#.utf8)) != nil)
    }

    /// Objects past `scannedMembers` find duplicates through an index of their keys: a key
    /// repeated from before the index was built, and one from after, are both refused.
    @Test(arguments: [3, 30])
    func duplicatesInLargeObjectsAreRefused(_ repeated: Int) {
        let members = (0 ..< 40).map { #""k\#($0)": \#($0)"# }
        let text = "{" + members.joined(separator: ", ") + #", "k\#(repeated)": 0}"#
        let duplicate = error(text)
        let firstColumn = ("{" + members[..<repeated].joined(separator: ", ") + ", ").count + 1
        #expect(duplicate?.message == #"duplicate key "k\#(repeated)" (first at line 1, column \#(firstColumn))"#)
        let unique = "{" + members.joined(separator: ", ") + "}"
        #expect(JSONValue.parse(Array(unique.utf8))?["k39"] == .int(39))
    }

    @Test(arguments: ["{} x", "[1] [2]", "1 2", "null,", "{}}", "\"a\" \"b\"", "true false"])
    func anythingAfterTheDocumentIsRefused(_ text: String) {
        #expect(error(text)?.message.hasSuffix("after the end of the document") == true, "\(text)")
    }

    @Test func whitespaceAroundTheDocumentIsAccepted() {
        #expect(JSONValue.parse(Array(" \t\r\n {\"a\": 1} \n\t ".utf8)) == .object([("a", .int(1))]))
    }

    @Test func trailingCommasAreNamed() {
        #expect(error("[1,]")?.message == "trailing comma before ']'")
        #expect(error(#"{"a": 1,}"#)?.message == "trailing comma before '}'")
    }

    @Test func commentsSingleQuotesAndBareWordsAreRefused() {
        #expect(error("// note\n{}")?.message == "unexpected '/' (comments are not allowed in JSON): expected a value")
        #expect(
            error("{'a': 1}")?.message
                == "unexpected \"'\" (JSON strings use double quotes): expected a key in double quotes")
        #expect(error("{a: 1}") != nil)
        #expect(error("tru")?.message == "unexpected 't': expected a value")
        #expect(error("True") != nil)
        #expect(error("nul") != nil)
    }

    @Test func anEmptyDocumentIsRefused() {
        #expect(error("")?.message == "the file is empty: expected a JSON object")
        #expect(error(" \n ")?.message == "the file is empty: expected a JSON object")
    }

    @Test func truncatedDocumentsAreRefused() {
        for text in ["[", "[1", "[1,", "{", #"{"a""#, #"{"a":"#, #"{"a": 1"#] {
            #expect(error(text) != nil, "\(text) parsed")
        }
    }

    @Test func nestingIsBoundedAtSixtyFourLevels() {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(JSONValue.parse(Array(deepest.utf8)) != nil)
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(error(tooDeep)?.message == "nested deeper than 64 levels")
        let objects = String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)
        #expect(error(objects)?.message == "nested deeper than 64 levels")
        let mixed = String(repeating: #"{"a":["#, count: 32) + "1" + String(repeating: "]}", count: 32)
        #expect(JSONValue.parse(Array(mixed.utf8)) != nil)
    }

    // MARK: Positions

    /// Positions are `line:column`, columns counted in characters.
    @Test func positionsAreLinesAndColumnsInCharacters() throws {
        #expect(error("{\n  \"a\": tru\n}")?.position.description == "2:8")
        // Columns count characters, not bytes: "é" is one column.
        #expect(error("[\"é\", x]")?.position.description == "1:7")
        let node = try parse("{\n  \"key\": [1,\n    2]\n}")
        guard case .object(let members) = node.value, case .array(let items) = members[0].value.value else {
            Issue.record("not an object of an array"); return
        }
        #expect(members[0].keyPosition.description == "2:3")
        #expect(members[0].value.position.description == "2:10")
        #expect(items.map(\.position.description) == ["2:11", "3:5"])
    }
}
