import FuzzOracles

@testable import PhoneNumbers

/// The phone-number front end (`DialString`, then `PhoneNumber.parse`), against libphonenumber
/// called directly. Input: a byte choosing the default region (none, GB, US, DE, IN, BR), then
/// the number as typed.
///
/// Invariants: an accepted number is '+' and 1 to 15 digits, and it is what libphonenumber
/// makes of the same digits; without a region, a '+' number keeps every digit written (E.164
/// digits = the digits typed, but for one group in parentheses, or `adjustment` says which trunk
/// prefix was dropped); and a
/// number typed as plain ASCII '+', digits, spaces and dashes that libphonenumber finds valid
/// with exactly the digits typed, at most 15 (E.164), in at most 100 characters, is accepted, as
/// the same number.
enum PhoneNumberTarget: FuzzTarget {
    static let name = "phone-number"

    static func run(_ input: [UInt8]) {
        var input = FuzzInput(input)
        let region = input.pick([nil, "GB", "US", "DE", "IN", "BR"])
        let text = input.line()
        let accepted = try? PhoneNumber.parse(text, defaultRegion: region)
        if let accepted {
            let digits = accepted.e164Digits
            require(
                accepted.e164.hasPrefix("+") && (1 ... 15).contains(digits.count) && digits.allSatisfy(\.isASCII)
                    && digits.allSatisfy(\.isNumber), "accepted \(shown(text)) as \(shown(accepted.e164))")
            let dial = try? DialString.read(text)
            require(dial != nil, "accepted a number whose dial string is refused: \(shown(text))")
            if let dial {
                let written = dial.hasPlus ? "+" + dial.digits : dial.digits
                let reference =
                    PhoneNumberOracle.parse(written, region: region)
                    ?? (dial.digits.hasPrefix("00")
                        ? PhoneNumberOracle.parse("+" + dial.digits.dropFirst(2), region: region) : nil)
                require(
                    reference?.e164 == accepted.e164 && reference?.isValid == true,
                    "\(shown(text)) is \(accepted.e164); libphonenumber gives \(reference.map { "\($0.e164) valid: \($0.isValid)" } ?? "an error")"
                )
                if dial.hasPlus, region == nil, accepted.adjustment == nil, !dial.isLocalNumberInContext {
                    // A trunk prefix written in parentheses ("+44 (0)7940…") is the one group that may go.
                    let typed = Array(dial.digits)
                    let withoutOneGroup = dial.parenthesizedDigits.map {
                        String(typed[..<$0.lowerBound] + typed[$0.upperBound...])
                    }
                    require(
                        digits == dial.digits || withoutOneGroup.contains(digits),
                        "\(shown(text)) lost or gained digits: \(accepted.e164)")
                }
            }
        }
        // Longer text is refused on purpose (`DialString.maximumLength`), whatever libphonenumber makes of it.
        let plain =
            text.count <= DialString.maximumLength && text.utf8.first == UInt8(ascii: "+")
            && text.utf8.dropFirst().allSatisfy { $0 == 0x20 || $0 == 0x2D || (0x30 ... 0x39).contains($0) }
        if plain, let reference = PhoneNumberOracle.parse(text, region: nil), reference.isValid,
            reference.e164.count <= 16,
            reference.e164.dropFirst()
                == text.utf8.filter({ (0x30 ... 0x39).contains($0) }).map({ String(UnicodeScalar($0)) }).joined()
        {
            require(
                accepted?.e164 == reference.e164,
                "\(shown(text)) is valid \(reference.e164) for libphonenumber; cellpath gives \(accepted?.e164 ?? "an error")"
            )
        }
    }
}
