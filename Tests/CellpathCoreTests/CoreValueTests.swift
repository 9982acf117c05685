import CellpathCore
import Testing

/// Redaction of personal data: what each kind keeps when masked, and that `.full` keeps all.
@Suite struct DisclosureTests {
    @Test func numbersKeepTheirLastTwoDigitsAndAPlus() {
        #expect(Disclosure.redacted.reveal("+447700900123", as: .msisdn) == "+••••23")
        #expect(Disclosure.redacted.reveal("234150123456789", as: .imsi) == "••••89")
        #expect(Disclosure.redacted.reveal("8944110012345678901", as: .iccid) == "••••01")
        #expect(Disclosure.redacted.reveal("358812345678905", as: .imei) == "••••05")
    }

    /// A quarter of a short value at most: a number of three digits or fewer shows none.
    @Test func shortNumbersKeepAtMostAQuarter() {
        #expect(Disclosure.redacted.reveal("12345", as: .imsi) == "••••5")
        #expect(Disclosure.redacted.reveal("123", as: .imsi) == "••••")
        #expect(Disclosure.redacted.reveal("+1", as: .msisdn) == "+••••")
    }

    @Test func secretsShowNothing() {
        for kind in [PersonalDataKind.token, .code, .cookie, .secret] {
            #expect(Disclosure.redacted.reveal("eyJhbGciOi.secret-part", as: kind) == "[redacted]")
        }
    }

    @Test func addressesAndEmptyValuesAreShownAsTheyAre() {
        #expect(Disclosure.redacted.reveal("100.64.23.10", as: .ipAddress) == "100.64.23.10")
        for kind in PersonalDataKind.allCases {
            #expect(Disclosure.redacted.reveal("", as: kind) == "")
        }
    }

    @Test func fullDisclosureKeepsEveryValue() {
        for kind in PersonalDataKind.allCases {
            #expect(Disclosure.full.reveal("+447700900123", as: kind) == "+447700900123")
        }
    }

    @Test func logMessagesMaskOnlyTheMarkedParts() {
        let imsi = "234150123456789", token = "abc.def"
        let message: LogMessage = "SIM \(imsi, as: .imsi) ready, token \(token, as: .token), attempt \(2)"
        #expect(message.rendered(.redacted) == "SIM ••••89 ready, token [redacted], attempt 2")
        #expect(message.rendered(.full) == "SIM 234150123456789 ready, token abc.def, attempt 2")
    }
}

/// Text from outside shown to people: what a terminal would act on is escaped, the rest kept.
@Suite struct TerminalSafeTextTests {
    @Test func escapeSequencesAndControlCharactersAreShownEscaped() {
        #expect("a\u{1B}[2Jb".terminalSafe == "a\\x1b[2Jb")
        #expect("line\nnext\r\tend".terminalSafe == "line\\nnext\\r\\tend")
        #expect("\u{0}\u{7F}\u{85}\u{9F}".terminalSafe == "\\x00\\x7f\\x85\\x9f")
    }

    @Test func bidirectionalOverridesAreShownEscaped() {
        #expect("abc\u{202E}fed".terminalSafe == "abc\\u{202e}fed")
        #expect("\u{200E}\u{200F}\u{2066}\u{2069}".terminalSafe == "\\u{200e}\\u{200f}\\u{2066}\\u{2069}")
    }

    @Test func printableTextIsKept() {
        let text = "Café 😀 +44 7700 900123 — ok\u{A0}\u{2065}"
        #expect(text.terminalSafe == text)
    }
}

/// Base64url without padding, as JSON Web Keys write numbers.
@Suite struct Base64URLTests {
    @Test func theURLAlphabetReplacesPlusAndSlashAndPaddingIsDropped() {
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode([0x01, 0x00, 0x01]) == "AQAB")
        #expect(Base64URL.encode([]) == "")
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("AQAB") == [0x01, 0x00, 0x01])
    }

    @Test func everyLengthRoundTrips() {
        for length in 0 ..< 40 {
            let bytes = (0 ..< length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes, "length \(length)")
        }
    }

    @Test(arguments: ["!!!!", "A", "AQA$", "A B C"])
    func whatIsNotBase64URLIsRefused(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}

/// The hexadecimal digit value of a byte, against the standard library's reading of each byte.
@Suite struct HexDigitTests {
    @Test func everyByteIsReadAsTheStandardLibraryReadsIt() {
        for byte in UInt8.min ... UInt8.max {
            let expected = UInt8(String(Character(Unicode.Scalar(byte))), radix: 16)
            #expect(byte.hexDigitValue == expected, "byte \(byte)")
        }
    }
}

/// What cellpath writes as JSON: members in order, strings escaped so that any parser reads them back.
@Suite struct JSONSerializationTests {
    @Test func stringsEscapeQuotesBackslashesAndControlCharacters() {
        #expect(JSONValue.quoted("a\"b\\c") == #""a\"b\\c""#)
        #expect(JSONValue.quoted("\n\r\t\u{01}\u{1F}\u{7F}") == #""\n\r\t\u0001\u001f\u007f""#)
        #expect(JSONValue.quoted("é/😀") == "\"é/😀\"")
    }

    @Test func whatIsWrittenParsesBackToTheSameValue() throws {
        let value = JSONValue.object([
            ("z", .int(-3)), ("a", .array([.double(0.5), .null, .bool(false)])),
            ("text", .string("tab\there \"quoted\" \u{1B}[0m é😀"))
        ])
        #expect(JSONValue.parse(Array(value.serialized.utf8)) == value)
    }

    @Test func nonFiniteNumbersAreWrittenAsNull() {
        #expect(JSONValue.array([.double(.infinity), .double(.nan)]).serialized == "[null,null]")
    }

    @Test func objectsCompareMemberByMemberInOrder() {
        #expect(JSONValue.object([("a", .int(1)), ("b", .int(2))]) != .object([("b", .int(2)), ("a", .int(1))]))
        #expect(JSONValue.int(1) != .double(1))
        #expect(JSONValue.object([("a", .null)])["a"] == .null)
        #expect(JSONValue.object([("a", .null)])["b"] == nil)
    }
}
