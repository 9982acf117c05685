import CellpathCore
import Testing

@testable import PhoneNumbers

/// A number that must parse, with what the numbering plan says about it.
struct ValidCase: Sendable, CustomTestStringConvertible {
    var input: String
    var region: String?
    var e164: String
    var regionCode: String
    var type: PhoneNumberType
    var why: String

    var testDescription: String { "\(input.debugDescription) in \(region?.debugDescription ?? "no region")" }
}

/// A number that must be refused, with words its message must contain.
struct InvalidCase: Sendable, CustomTestStringConvertible {
    var input: String
    var region: String?
    var message: String
    var hint: String? = nil

    var testDescription: String { "\(input.debugDescription) in \(region?.debugDescription ?? "no region")" }
}

// Expected values follow each country's numbering plan (the `why` column), then were
// checked against libphonenumber 8.12 (Debian 12).
let validCases: [ValidCase] = [
    // United Kingdom: mobile numbers are 07xxx xxxxxx, national significant number 10 digits.
    .init(
        input: "+44 7940 448591", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "a UK mobile number, international form"),
    .init(
        input: "0044 7940 448591", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "leading 00 is the ITU international prefix when no region is given"),
    .init(
        input: "0044 7700 100123", region: "GB", e164: "+447700100123", regionCode: "GB", type: .mobile,
        why: "with region GB, libphonenumber strips GB's international prefix 00, and only that"),
    .init(
        input: "07940 448591", region: "GB", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "national form: trunk prefix 0 dropped"),
    .init(
        input: "07940448591", region: "gb", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "region codes are case-insensitive"),
    .init(
        input: "tel:+44-7940-448591", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "RFC 3966 global number with visual separators"),
    .init(
        input: "TEL:07940448591;phone-context=+44", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "RFC 3966 local number in a '+44' context"),
    .init(
        input: "  +44 (0)7940 448591 ", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "the British '(0)' trunk prefix inside an international number is dropped"),
    .init(
        input: "447940448591", region: "GB", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "12 digits are too many for a GB national number, but 44 + 10 fit"),
    .init(
        input: "+44 7700 100123", e164: "+447700100123", regionCode: "GB", type: .mobile,
        why: "07700 0/1xxxxx are mobile; the inner 00 stays"),
    .init(
        input: "0044 7700 100123", e164: "+447700100123", regionCode: "GB", type: .mobile,
        why: "only the leading 00 is the prefix; the inner 00 stays"),
    .init(
        input: "+44 20 7031 3000", e164: "+442070313000", regionCode: "GB", type: .fixedLine,
        why: "020 is London, a geographic (fixed-line) area code"),
    .init(
        input: "+44 800 123 4567", e164: "+448001234567", regionCode: "GB", type: .tollFree,
        why: "0800 is freephone"),
    .init(
        input: "+44\u{00A0}7940\u{00A0}448591", region: "US", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "no-break spaces separate groups; a '+' number ignores the default region"),
    // North America: one plan, fixed and mobile share area codes, so the type cannot be told.
    .init(
        input: "+1 201-555-0123", e164: "+12015550123", regionCode: "US", type: .fixedLineOrMobile,
        why: "201 is a New Jersey area code"),
    .init(
        input: "(201) 555-0123", region: "US", e164: "+12015550123", regionCode: "US", type: .fixedLineOrMobile,
        why: "US national form"),
    .init(
        input: "tel:+1-201-555-0123;npdi;rn=+1-201-555-0000", e164: "+12015550123", regionCode: "US",
        type: .fixedLineOrMobile, why: "routing parameters do not change the number"),
    // India: mobile numbers are 10 digits starting 6-9; national trunk prefix 0.
    .init(
        input: "+91 98765 43210", e164: "+919876543210", regionCode: "IN", type: .mobile,
        why: "98xxx is a mobile series"),
    .init(
        input: "098765 43210", region: "IN", e164: "+919876543210", regionCode: "IN", type: .mobile,
        why: "Indian national form with trunk 0"),
    // Germany: mobile 015x/016x/017x, Berlin is 030.
    .init(
        input: "+49 1512 3456789", e164: "+4915123456789", regionCode: "DE", type: .mobile,
        why: "01512 is a mobile prefix"),
    .init(
        input: "030/1234567", region: "DE", e164: "+49301234567", regionCode: "DE", type: .fixedLine,
        why: "Berlin 030, written the German way with a slash"),
    // France: 06/07 mobile, 01 Île-de-France.
    .init(
        input: "06 12 34 56 78", region: "FR", e164: "+33612345678", regionCode: "FR", type: .mobile,
        why: "06 is mobile"),
    .init(
        input: "+33 1 40 00 00 00", e164: "+33140000000", regionCode: "FR", type: .fixedLine,
        why: "01 is Paris and its region"),
    // Spain: no trunk prefix; 6xx mobile, 91 Madrid.
    .init(
        input: "+34 612 34 56 78", e164: "+34612345678", regionCode: "ES", type: .mobile,
        why: "6xx is mobile"),
    .init(
        input: "912.34.56.78", region: "ES", e164: "+34912345678", regionCode: "ES", type: .fixedLine,
        why: "91 is Madrid; dots separate groups"),
    // Brazil: 11 São Paulo; mobile numbers have a ninth digit 9.
    .init(
        input: "+55 11 98765-4321", e164: "+5511987654321", regionCode: "BR", type: .mobile,
        why: "11 9xxxx-xxxx is a São Paulo mobile"),
    .init(
        input: "0021 44 7940 448591", region: "BR", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "in Brazil 00 + carrier 21 is the international prefix"),
    // Australia: 04 mobile, 02 New South Wales.
    .init(
        input: "0412 345 678", region: "AU", e164: "+61412345678", regionCode: "AU", type: .mobile,
        why: "04 is mobile"),
    .init(
        input: "+61 2 9374 4000", e164: "+61293744000", regionCode: "AU", type: .fixedLine,
        why: "02 is Sydney"),
    // Japan: 090/080/070 mobile.
    .init(
        input: "090-1234-5678", region: "JP", e164: "+819012345678", regionCode: "JP", type: .mobile,
        why: "090 is mobile"),
    // Nigeria: 0803 is an MTN mobile prefix.
    .init(
        input: "0803 123 4567", region: "NG", e164: "+2348031234567", regionCode: "NG", type: .mobile,
        why: "0803 is mobile"),
    // Italy keeps the leading 0 of geographic numbers in international form.
    .init(
        input: "+39 06 1234 5678", e164: "+390612345678", regionCode: "IT", type: .fixedLine,
        why: "06 is Rome; the 0 is part of the number, not a trunk prefix"),
    // Global services have no geographic region.
    .init(
        input: "+800 1234 5678", e164: "+80012345678", regionCode: "001", type: .tollFree,
        why: "+800 is the ITU universal freephone code"),
    .init(
        input: "+882 34 21234", e164: "+8823421234", regionCode: "001", type: .mobile,
        why: "+882 is International Networks; its 34 range is mobile"),
    .init(
        input: "+882 16 1234 5678", e164: "+8821612345678", regionCode: "001", type: .voip,
        why: "+882 16 is a VoIP range of International Networks"),
    .init(
        input: "+883 510012345", e164: "+883510012345", regionCode: "001", type: .voip,
        why: "+883 is International Networks too"),
    .init(
        input: "+870 773 111 632", e164: "+870773111632", regionCode: "001", type: .mobile,
        why: "+870 is Inmarsat, a satellite mobile service"),
    .init(
        input: "+881 612 345 678", e164: "+881612345678", regionCode: "001", type: .mobile,
        why: "+881 is the Global Mobile Satellite System"),
    // Decimal digits of other scripts are the same digits (libphonenumber reads them too).
    .init(
        input: "+٤٤ ٧٩٤٠ ٤٤٨٥٩١", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "Arabic-Indic digits"),
    .init(
        input: "۰۷۹۴۰ ۴۴۸۵۹۱", region: "GB", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "Extended Arabic-Indic (Persian) digits, national form"),
    .init(
        input: "＋４４　７９４０　４４８５９１", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "fullwidth plus, digits and ideographic spaces, as Japanese input methods type them"),
    .init(
        input: "（０７９４０）４４８５９１", region: "GB", e164: "+447940448591", regionCode: "GB", type: .mobile,
        why: "fullwidth parentheses"),
    // A trunk prefix written in parentheses is the written convention for "not dialled from abroad".
    .init(
        input: "+49 (0)1512 3456789", e164: "+4915123456789", regionCode: "DE", type: .mobile,
        why: "the German '(0)' is dropped as the British one is"),
    .init(
        input: "+39 (0)6 1234 5678", e164: "+390612345678", regionCode: "IT", type: .fixedLine,
        why: "in Italy the 0 is part of the number: kept, parentheses or not")
]

let invalidCases: [InvalidCase] = [
    .init(input: "", message: "empty"),
    .init(input: "   ", message: "empty"),
    .init(input: "abc", message: "no digits"),
    .init(input: "tel:", message: "no number"),
    .init(input: "tel:;phone-context=+44", message: "no number"),
    .init(input: "+44 7940 448591 x12", message: "has an extension, which a SIM's number never has"),
    // Found by the `phone-number` fuzz target (docs/fuzzing.md): libphonenumber finds this valid.
    .init(input: "+49 800 95891144441", message: "16 digits with its country code; E.164 allows at most 15"),
    .init(input: "+44 7940 448591 ext. 123", message: "has an extension", hint: "without it"),
    .init(input: "+44 7940 448591 Ext 123", message: "has an extension"),
    .init(input: "+44 7940 448591 extension 1", message: "has an extension"),
    .init(input: "+447940448591;ext=123", message: "has an extension"),
    .init(input: "+44 7940 448591 #123", message: "has an extension"),
    .init(input: "+44 7940 448591 ｅｘｔ．１２", message: "has an extension"),
    .init(input: "+44 7940 448591#", message: "'#'"),
    .init(input: "+44 7940 448591 xyz", message: "contains 'x', which"),
    .init(input: "+44 7940 448591\u{FF10}", message: "mixes digits of different scripts"),
    .init(input: "+44 79٤0 448591", message: "mixes digits of different scripts"),
    .init(input: "+44 7940 448591²", message: "'²' (U+00B2)"),
    .init(
        input: "+4407940448591", message: "trunk prefix 0 after +44, which international form never has",
        hint: "or pass --region GB"),
    .init(input: "0044 07940 448591", message: "trunk prefix 0 after +44"),
    .init(input: "+44 0 7940 448591", region: "DE", message: "trunk prefix 0 after +44", hint: "--region GB"),
    .init(
        input: "0044 07940 448591", region: "GB", message: "trunk prefix 0 after +44",
        hint: "write it without the 0 after +44"),
    .init(input: "+7 8 912 345 6789", message: "trunk prefix 8 after +7"),
    .init(
        input: "+54 11 15 1234 5678", message: "the digits after +54 are written in national form",
        hint: "--region AR"),
    .init(input: "+88212345", message: "too short for a +882 (international network) number"),
    .init(input: "44+7940448591", message: "'+' may only begin"),
    .init(input: "++447940448591", message: "'+' may only begin"),
    .init(input: "+44 7940 448591\r\n", message: "control character (U+000D CARRIAGE RETURN)"),
    .init(input: "+44 7940\n448591", message: "control character (U+000A LINE FEED)"),
    .init(input: "+44 7940 448591\u{0}", message: "control character (U+0000 NUL)"),
    .init(input: "+44\t7940448591", message: "control character (U+0009"),
    .init(input: "\u{202E}+44 7940 448591", message: "control character (U+202E"),
    .init(input: "+44 7940 448591\u{2028}", message: "control character (U+2028"),
    .init(input: String(repeating: "1", count: 101), message: "too long (101 characters)"),
    .init(
        input: "07940 448591", message: "no country code", hint: "give it in international form (+44…) or pass --region"
    ),
    .init(input: "447940448591", message: "no country code", hint: "--region"),
    .init(input: "07940 448591", region: "US", message: "not valid", hint: "national number of US"),
    .init(
        input: "0044 7940 448591", region: "US", message: "not valid", hint: "\"00\" is not the international prefix"),
    .init(input: "+44 12", message: "too short for a GB number"),
    .init(input: "+4477009000001", message: "too long for a GB number"),
    .init(input: "+44 7700 900123", message: "no GB number begins with these digits"),
    .init(input: "+44 1632 960123", message: "no GB number begins with these digits"),
    .init(input: "+999 123456", message: "known country calling code"),
    .init(input: "1", region: "GB", message: "not a phone number"),
    .init(input: "tel:+447940448591;ext=12", message: "extension"),
    .init(input: "tel:+447940448591;isub=1234", message: "subaddress"),
    .init(input: "tel:7042;phone-context=example.com", message: "private numbering context"),
    .init(input: "tel:+447940448591;phone-context=+44", message: "phone-context on a global"),
    .init(input: "tel:079;phone-context=+44;phone-context=+44", message: "more than one phone-context"),
    .init(input: "+44 7940 448591", region: "XX", message: "XX is not a region"),
    .init(input: "+44 7940 448591", region: "UK", message: "GB, not UK"),
    .init(input: "+44 7940 448591", region: "GBR", message: "two letters"),
    .init(input: "+44 7940 448591", region: "", message: "two letters"),
    .init(input: "+44 7940 448591", region: "G\n", message: "two letters (ISO 3166), not \"G\\n\"")
]

@Suite("Phone number parsing")
struct PhoneNumberParsingTests {
    @Test("valid numbers", arguments: validCases)
    func valid(_ row: ValidCase) throws {
        let number = try PhoneNumber.parse(row.input, defaultRegion: row.region)
        #expect(number.e164 == row.e164, "\(row.why)")
        #expect(number.e164Digits == String(row.e164.dropFirst()))
        #expect(number.regionCode == row.regionCode, "\(row.why)")
        #expect(number.type == row.type, "\(row.why)")
        #expect(number.isValid)
        #expect(number.isMobileCapable == (row.type == .mobile || row.type == .fixedLineOrMobile))
        #expect("+\(number.countryCode)\(number.nationalNumber)" == row.e164)
        // The display form has the same digits, grouped.
        #expect(number.internationalFormat.filter(\.isNumber) == number.e164Digits)
    }

    @Test("refused inputs say why", arguments: invalidCases)
    func invalid(_ row: InvalidCase) {
        let error = #expect(throws: CellpathError.self) {
            // A configured region, not --region: it never allows a trunk prefix after the code.
            try PhoneNumber.parse(
                row.input, defaultRegion: row.region,
                regionIsExplicit: row.region != nil && row.input.hasPrefix("+"))
        }
        #expect(error?.kind == .dataError)
        #expect(error?.message.contains(row.message) == true, "message: \(error?.message ?? "none")")
        if let hint = row.hint {
            #expect(error?.hint?.contains(hint) == true, "hint: \(error?.hint ?? "none")")
        }
    }

    @Test("error messages never repeat the number")
    func messagesKeepNumberPrivate() {
        for row in invalidCases where row.input.filter(\.isASCII).filter(\.isNumber).count >= 6 {
            let digits = String(row.input.filter(\.isASCII).filter(\.isNumber).suffix(6))
            do {
                _ = try PhoneNumber.parse(
                    row.input, defaultRegion: row.region,
                    regionIsExplicit: row.region != nil && row.input.hasPrefix("+"))
                Issue.record("\(row.testDescription) parsed")
            } catch {
                #expect(!error.message.contains(digits), "\(error.message)")
                #expect(!(error.hint ?? "").contains(digits), "\(error.hint ?? "")")
            }
        }
    }

    @Test("an inner 00 is never taken for an international prefix")
    func innerDoubleZeroSurvives() throws {
        // The tutorial app strips the first "00" anywhere: "+447700100123" became "+4477100123".
        for input in ["+447700100123", "0044 7700 100123", "tel:+44-7700-100123"] {
            let number = try PhoneNumber.parse(input, defaultRegion: nil)
            #expect(number.e164 == "+447700100123")
            #expect(number.nationalNumber == "7700100123")
        }
        // Too long to be valid, but kept exactly as written when invalid numbers are allowed.
        let long = try PhoneNumber.parse("+4477009000001", defaultRegion: nil, allowInvalid: true)
        #expect(long.e164 == "+4477009000001")
        #expect(!long.isValid)
    }

    @Test("allowInvalid returns a plausible but invalid number, marked invalid")
    func allowInvalid() throws {
        let number = try PhoneNumber.parse("+44 1632 960123", defaultRegion: nil, allowInvalid: true)
        #expect(number.e164 == "+441632960123")
        #expect(number.countryCode == 44)
        #expect(!number.isValid)
        #expect(number.regionCode == "ZZ")
        #expect(number.type == .unknown)
        #expect(!number.isMobileCapable)
        // Input that is not a number at all still throws.
        #expect(throws: CellpathError.self) {
            try PhoneNumber.parse("abc", defaultRegion: nil, allowInvalid: true)
        }
    }

    @Test("fixed-line and service numbers are not mobile-capable")
    func nonMobile() throws {
        for (input, region) in [("030 1234567", "DE"), ("+44 800 123 4567", nil), ("+33 1 40 00 00 00", nil)] {
            let number = try PhoneNumber.parse(input, defaultRegion: region)
            #expect(number.type != .mobile)
            #expect(!number.isMobileCapable)
        }
    }

    @Test("display and description keep the number private unless asked")
    func disclosure() throws {
        let number = try PhoneNumber.parse("+44 7940 448591", defaultRegion: nil)
        #expect(number.internationalFormat == "+44 7940 448591")
        #expect(number.display(.full) == "+44 7940 448591")
        #expect(!number.display(.redacted).contains("448591"))
        #expect(!"\(number)".contains("448591"))
        #expect("\(number)".hasSuffix("91"))
    }

    @Test("region codes")
    func regions() throws {
        #expect(try PhoneNumber.normalizedRegion("gb") == "GB")
        #expect(try PhoneNumber.normalizedRegion("Ng") == "NG")
        #expect(try PhoneNumber.countryCode(forRegion: "GB") == 44)
        #expect(try PhoneNumber.countryCode(forRegion: "us") == 1)
        #expect(try PhoneNumber.countryCode(forRegion: "JP") == 81)
        for bad in ["ZZ", "001", "X1", "ÉÉ", "QQ"] {
            #expect(throws: CellpathError.self, "\(bad)") { try PhoneNumber.normalizedRegion(bad) }
        }
    }

    @Test("type names for people")
    func typeWords() {
        #expect(PhoneNumberType.fixedLineOrMobile.numberPhrase == "fixed-line or mobile number")
        #expect(PhoneNumberType.uan.numberPhrase == "universal access number")
        #expect(PhoneNumberType.unknown.numberPhrase == "number of unknown type")
        #expect(PhoneNumberType.mobile.rawValue == "mobile")
    }

    @Test("a trunk prefix after the country code is dropped only when --region names that country")
    func trunkPrefixWithExplicitRegion() throws {
        for input in ["+44 07940 448591", "+4407940448591", "0044 07940 448591"] {
            let number = try PhoneNumber.parse(input, defaultRegion: "gb", regionIsExplicit: true)
            #expect(number.e164 == "+447940448591")
            #expect(number.adjustment == "dropped the trunk prefix 0 written after +44: E.164 numbers have none")
            // The same region from the configuration is only a default: it allows nothing.
            #expect(throws: CellpathError.self) { try PhoneNumber.parse(input, defaultRegion: "GB") }
        }
        let rewritten = try PhoneNumber.parse("+54 11 15 1234 5678", defaultRegion: "AR", regionIsExplicit: true)
        #expect(rewritten.e164 == "+5491112345678")
        #expect(rewritten.adjustment?.contains("AR's national form") == true)
        // Written as optional, the (0) needs no region and no warning; a plain number has no adjustment.
        #expect(try PhoneNumber.parse("+44 (0)7940 448591", defaultRegion: nil).adjustment == nil)
        #expect(try PhoneNumber.parse("+44 7940 448591", defaultRegion: "GB", regionIsExplicit: true).adjustment == nil)
    }

    @Test("a configured region is read only for numbers written without '+'")
    func regionReadLazily() throws {
        let broken = CellpathError(.configuration, "environment CELLPATH_REGION: invalid value")
        func configuredRegion() throws(CellpathError) -> String? { throw broken }
        let number = try PhoneNumber.parse("+44 7940 448591", defaultRegion: try configuredRegion())
        #expect(number.e164 == "+447940448591")
        let error = #expect(throws: CellpathError.self) {
            try PhoneNumber.parse("07940 448591", defaultRegion: try configuredRegion())
        }
        #expect(error == broken)
    }

    @Test("non-geographic numbers name their network, not a country")
    func nonGeographicPlace() throws {
        #expect(try PhoneNumber.parse("+882 34 21234", defaultRegion: nil).place == "international network +882")
        #expect(try PhoneNumber.parse("+44 7940 448591", defaultRegion: nil).place == "GB")
    }
}
