import CellpathCore
import Testing

@Suite struct TextSearchTests {
    @Test(arguments: [
        ("a\"b\"\"c", "\"", "\"\"", "a\"\"b\"\"\"\"c"),
        ("</script><script></script>", "</script", "<\\/script", "<\\/script><script><\\/script>"),
        ("aaa", "aa", "b", "ba"),  // left to right, no overlap
        ("abc", "", "x", "abc"),  // an empty target replaces nothing
        ("abc", "abcd", "x", "abc"),  // a target longer than the text
        ("ab", "b", "bb", "abb")  // a replacement is not searched again
    ])
    func replacingEvery(_ text: String, _ target: String, _ replacement: String, _ expected: String) {
        #expect(text.replacingEvery(target, with: replacement) == expected)
    }

    /// A quote followed by a combining mark is one character, and still a quote to escape; a
    /// value beside a multi-byte character is still found.
    @Test func matchesBytesNotCharacters() {
        #expect("x\"\u{301}y".replacingEvery("\"", with: "\"\"") == "x\"\"\u{301}y")
        #expect("é350000000000001ü".replacingEvery("350000000000001", with: "IMEI-1") == "éIMEI-1ü")
    }

    @Test func containsMatchesBytes() {
        let crlf = "a\r\nb"
        #expect(crlf.contains("\r"))  // "\r\n" is one character
        let quoted = "x\"\u{301}"
        #expect(quoted.contains("\""))
        #expect("abc".contains(""))
        #expect("abc".contains("bc"))
        #expect(!"abc".contains("cb"))
        let tail = "abc".dropFirst()
        #expect(tail.contains("bc"))
        #expect(!tail.contains("a"))
    }

    @Test func rangeOfText() throws {
        let text = "e.g. this. That"
        let range = try #require(text.range(ofText: ". "))
        #expect(text[..<range.lowerBound] == "e.g")
        #expect(text[range.upperBound...] == "this. That")
        #expect(text.range(ofText: "") == nil)
        #expect(text.range(ofText: "that") == nil)
        #expect(text.range(ofText: "That").map { String(text[$0]) } == "That")
        let line = "sim: error: no such scenario"
        #expect(line.range(ofText: "error: ").map { String(line[$0.upperBound...]) } == "no such scenario")
        // A substring searches its own part only, with its base's indices.
        let tail = text[text.index(text.startIndex, offsetBy: 5)...]
        #expect(tail.range(ofText: ". ").map { text[..<$0.lowerBound] } == "e.g. this")
    }
}
