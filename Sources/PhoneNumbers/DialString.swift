import CellpathCore

/// A phone number as the user wrote it, reduced to its digits and a leading '+', before
/// libphonenumber sees it.
///
/// Reading is strict so that nothing is guessed: only digits, one leading '+', spaces and the
/// visual separators `- . ( ) /` (and Unicode spaces and dashes) are allowed, or a `tel:` URI
/// (RFC 3966). Decimal digits of any one script (Arabic-Indic "٤٤", fullwidth "４４") are read
/// as the digits they are, as libphonenumber reads them; digits of two scripts in one number are
/// refused. An extension ("ext. 123", "x123", ";ext=123") is refused: a SIM's number has none.
/// Control and invisible formatting characters (CR, LF, NUL, tab, bidi marks) are refused.
/// Digits are never removed or reordered: a "00" inside a number always stays.
struct DialString: Equatable {
    /// True when the number began with '+' (or a `tel:` global number or '+' phone-context).
    var hasPlus: Bool
    /// ASCII digits only, in the order written (a leading "00" is still there).
    var digits: String
    /// Positions in `digits` of the digit groups written in parentheses, such as the "(0)" of
    /// "+44 (0)7940 448591".
    var parenthesizedDigits: [Range<Int>] = []
    /// True for a `tel:` URI's local number with a '+' phone-context: its digits are written as
    /// dialled inside that context, with a trunk prefix if the country has one.
    var isLocalNumberInContext = false

    /// Longest input accepted, in characters; longer text is not a phone number.
    static let maximumLength = 100

    /// Reads `input`: plain text such as "+44 (0)7940-448591" or a `tel:` URI.
    static func read(_ input: String) throws(CellpathError) -> DialString {
        try refuseControlCharacters(input)
        let text = trimmed(input)
        if text.isEmpty {
            throw CellpathError(.dataError, "the phone number is empty")
        }
        if text.count > maximumLength {
            throw CellpathError(.dataError, "the phone number is too long (\(text.count) characters)")
        }
        if text.lowercased().hasPrefix("tel:") {
            return try readTelURI(String(text.dropFirst(4)))
        }
        return try readPlain(text)
    }

    /// Reads digits with visual separators and an optional leading '+'.
    private static func readPlain(_ text: String) throws(CellpathError) -> DialString {
        var dial = DialString(hasPlus: false, digits: "")
        var digitScript: UInt32?
        var openParenthesis: Int?
        let written = Array(text.unicodeScalars)
        let scalars = written.map(asciiForm)
        for (index, scalar) in scalars.enumerated() {
            if let digit = decimalDigit(written[index]) {
                let zero = written[index].value - UInt32(digit)
                if let script = digitScript, script != zero {
                    throw CellpathError(
                        .dataError, "the phone number mixes digits of different scripts",
                        hint: "write every digit in one script, such as 0-9")
                }
                digitScript = zero
                dial.digits.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "0") + UInt8(digit)))
            } else if scalar == "+" {
                guard dial.digits.isEmpty, !dial.hasPlus else {
                    throw CellpathError(.dataError, "'+' may only begin a phone number", hint: allowedHint)
                }
                dial.hasPlus = true
            } else if scalar == "(" {
                openParenthesis = dial.digits.count
            } else if scalar == ")" {
                if let start = openParenthesis, start < dial.digits.count {
                    dial.parenthesizedDigits.append(start ..< dial.digits.count)
                }
                openParenthesis = nil
            } else if !isVisualSeparator(scalar) {
                if dial.digits.isEmpty && !scalars[index...].contains(where: { decimalDigit($0) != nil }) {
                    throw CellpathError(.dataError, "this is not a phone number: it has no digits", hint: allowedHint)
                }
                if !dial.digits.isEmpty && isExtension(scalars[index...]) {
                    throw extensionError("an extension")
                }
                throw CellpathError(
                    .dataError,
                    "the phone number contains \(describe(written[index])), which is not part of a phone number",
                    hint: allowedHint)
            }
        }
        if dial.digits.isEmpty {
            throw CellpathError(.dataError, "this is not a phone number: it has no digits", hint: allowedHint)
        }
        return dial
    }

    /// The value of a decimal digit of any script ('7', '٧', '７'), or nil.
    private static func decimalDigit(_ scalar: Unicode.Scalar) -> Int? {
        guard scalar.properties.numericType == .decimal, let value = scalar.properties.numericValue else { return nil }
        return Int(value)
    }

    /// The ASCII character for a fullwidth form ('＋' → '+', '（' → '('); other scalars unchanged.
    private static func asciiForm(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        (0xFF01 ... 0xFF5E).contains(scalar.value) ? Unicode.Scalar(scalar.value - 0xFEE0)! : scalar
    }

    /// Whether `rest` (from the first character that is not part of a number) is an extension:
    /// a marker ("ext", "ext.", "extn", "extension", "x", "#", ";ext=") and its digits.
    private static func isExtension(_ rest: ArraySlice<Unicode.Scalar>) -> Bool {
        let text = String(String.UnicodeScalarView(rest)).lowercased()
        let markers = [";ext=", "extension", "extn", "ext", "x", "#"]
        guard let marker = markers.first(where: { text.hasPrefix($0) }) else { return false }
        let digits = text.dropFirst(marker.count).drop { ".:= ".contains($0) }
        return !digits.isEmpty && digits.unicodeScalars.allSatisfy { decimalDigit($0) != nil || $0 == "#" }
    }

    /// The error for an extension or a subaddress (`what`): SubscriberCheck checks the SIM's
    /// number, and a SIM's number has neither.
    private static func extensionError(_ what: String) -> CellpathError {
        CellpathError(
            .dataError, "the phone number has \(what), which a SIM's number never has",
            hint: "give the number without it: SubscriberCheck checks the number of a SIM")
    }

    /// Reads the part after "tel:" (RFC 3966): a global number ("+44-7940-448591") or a local
    /// number with a '+' phone-context; parameters that cannot change the number are ignored.
    private static func readTelURI(_ body: String) throws(CellpathError) -> DialString {
        let parts = body.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        if trimmed(parts[0]).isEmpty {
            throw CellpathError(.dataError, "the tel: URI has no number", hint: "write it as tel:+447940448591")
        }
        let number = try readPlain(parts[0])
        var context: DialString?
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = pair[0].lowercased()
            let value = pair.count == 2 ? String(pair[1]) : ""
            switch name {
            case "ext":
                throw extensionError("an extension (;ext=)")
            case "isub":
                throw extensionError("an ISDN subaddress (;isub=)")
            case "phone-context":
                guard context == nil else {
                    throw CellpathError(.dataError, "the tel: URI has more than one phone-context")
                }
                context = try readPhoneContext(value, globalNumber: number.hasPlus)
            default:
                // Other parameters (npdi, rn, cic, vendor ones) route or describe the call;
                // the subscriber's number is fully given by the number and its phone-context.
                continue
            }
        }
        guard let context else { return number }
        return DialString(hasPlus: true, digits: context.digits + number.digits, isLocalNumberInContext: true)
    }

    /// Reads a phone-context value: only a '+' prefix of a global number (RFC 3966 §5.1.5) says
    /// which public number a local one is; a domain name names a private numbering space.
    private static func readPhoneContext(_ value: String, globalNumber: Bool) throws(CellpathError) -> DialString {
        if globalNumber {
            throw CellpathError(
                .dataError, "the tel: URI has a phone-context on a global (+) number, which RFC 3966 does not allow",
                hint: "remove ;phone-context=…")
        }
        let context = value.hasPrefix("+") ? try? readPlain(value) : nil
        guard let context, context.hasPlus else {
            throw CellpathError(
                .dataError, "the tel: URI is a local number in a private numbering context, not a public phone number",
                hint: "give the number in international form (+44…)")
        }
        return context
    }

    /// Refuses C0/C1 controls (CR, LF, NUL, tab…), line separators and invisible format marks.
    private static func refuseControlCharacters(_ input: String) throws(CellpathError) {
        for scalar in input.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                throw CellpathError(
                    .dataError, "the phone number contains a control character (\(describe(scalar)))",
                    hint: "type the number again without line breaks or pasted invisible characters")
            default:
                continue
            }
        }
    }

    /// `text` without leading and trailing spaces (any Unicode space separator).
    private static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(scalars[first ... last])
    }

    /// Spaces, dashes and the punctuation people write between digit groups.
    private static func isVisualSeparator(_ scalar: Unicode.Scalar) -> Bool {
        isSpace(scalar) || "-.()/".unicodeScalars.contains(scalar)
            || scalar.properties.generalCategory == .dashPunctuation
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .spaceSeparator
    }

    /// "'x'" for a printable ASCII character, "U+000A LINE FEED" or "'–' (U+2013)" for others.
    private static func describe(_ scalar: Unicode.Scalar) -> String {
        if scalar.isASCII && !scalar.properties.isWhitespace && scalar.value >= 0x20 && scalar.value < 0x7F {
            return "'\(scalar)'"
        }
        let code = String(scalar.value, radix: 16, uppercase: true)
        let padded = "U+" + String(repeating: "0", count: max(0, 4 - code.count)) + code
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator:
            let name = controlNames[scalar.value] ?? scalar.properties.nameAlias ?? scalar.properties.name
            return name.map { "\(padded) \($0)" } ?? padded
        default:
            return "'\(scalar)' (\(padded))"
        }
    }

    /// Names of the control characters most often pasted by accident (Unicode gives them none).
    private static let controlNames: [UInt32: String] = [
        0x00: "NUL", 0x09: "TAB", 0x0A: "LINE FEED", 0x0D: "CARRIAGE RETURN", 0x1B: "ESCAPE", 0x7F: "DELETE"
    ]

    private static let allowedHint = "use digits, one leading '+', spaces and - . ( ) /, or a tel: URI"
}
