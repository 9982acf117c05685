import CPhoneNumber
import CellpathCore

extension PhoneNumber {
    /// Parses a phone number written by a person: "+44 7940 448591", "0044 7940 448591",
    /// "07940 448591" with `defaultRegion` "GB", or a `tel:` URI ("tel:+44-7940-448591").
    ///
    /// `defaultRegion` (ISO 3166 alpha-2, any case) is read only for numbers written without
    /// '+' (so a configuration error behind it fails only those); with it, that region's
    /// national and international prefixes apply (libphonenumber). Without it, a leading "00" is
    /// read as '+' (the ITU international prefix) and any other number without '+' is refused.
    /// Digits are never dropped: "+44 7700 900123" keeps its "00". Digits written after the
    /// country code in national form (the trunk prefix of "+44 07940 448591") are refused,
    /// unless written in parentheses ("+44 (0)7940 448591") or `regionIsExplicit` says the
    /// region (then read for '+' numbers too) is that country: the number then says what was
    /// dropped in `adjustment`.
    /// Throws `.dataError` saying why unless the number is valid; with `allowInvalid`, a number
    /// of plausible shape that is not valid is returned with `isValid == false` instead.
    /// Safe to call from any thread; after the first call (metadata load) it takes microseconds.
    public static func parse(
        _ input: String, defaultRegion: @autoclosure () throws(CellpathError) -> String?,
        regionIsExplicit: Bool = false, allowInvalid: Bool = false
    ) throws(CellpathError) -> PhoneNumber {
        let dial = try DialString.read(input)
        let region =
            dial.hasPlus && !regionIsExplicit
            ? nil : try defaultRegion().map { region throws(CellpathError) in try normalizedRegion(region) }
        let text: String
        // Where the country code begins in `dial.digits` when it was written after '+' or "00".
        let countryCodeOffset: Int?
        if dial.hasPlus {
            text = "+" + dial.digits
            countryCodeOffset = 0
        } else if region != nil {
            text = dial.digits
            countryCodeOffset = nil
        } else if dial.digits.hasPrefix("00") {
            text = "+" + dial.digits.dropFirst(2)
            countryCodeOffset = 2
        } else {
            throw CellpathError(
                .dataError, "the phone number has no country code, and no region was given to read it in",
                hint: "give it in international form (+44…) or pass --region")
        }
        var parsed = cpn_number()
        let status = cpn_parse(text, region, &parsed)
        guard status == CPN_PARSE_OK else {
            throw parseFailure(status, dial: dial, region: region)
        }
        var number = PhoneNumber(parsed)
        // libphonenumber's metadata takes some national numbers longer than E.164 allows (a German
        // 0800 number of 14 digits); such a number has no E.164 form.
        if number.e164Digits.count > 15 {
            throw CellpathError(
                .dataError,
                "the phone number has \(number.e164Digits.count) digits with its country code; E.164 allows at most 15")
        }
        if parsed.country_code_written && !dial.isLocalNumberInContext {
            number.adjustment = try checkWrittenNationalPart(
                of: number, countryRegion: string(parsed.country_region), dial: dial,
                countryCodeOffset: countryCodeOffset,
                explicitRegion: regionIsExplicit ? region : nil)
        }
        if !number.isValid && !allowInvalid {
            throw invalidity(parsed, dial: dial, region: region)
        }
        return number
    }

    /// Checks that the digits written after the country code are exactly the national significant
    /// number, as E.164 has them; libphonenumber silently drops a national (trunk) prefix there
    /// ("+44 07940…" becomes "+44 7940…") and rewrites national forms ("+54 11 15…").
    /// Returns a sentence saying what changed when that is allowed (digits in parentheses, or
    /// `explicitRegion` is the number's country), nil when nothing changed; throws otherwise.
    private static func checkWrittenNationalPart(
        of number: PhoneNumber, countryRegion: String, dial: DialString, countryCodeOffset: Int?,
        explicitRegion: String?
    ) throws(CellpathError) -> String? {
        let code = String(number.countryCode)
        let national = number.nationalNumber
        let digits = dial.digits
        // The digits between the country code and the national number, and where they are.
        let dropped: (digits: Substring, range: Range<Int>)?
        if let offset = countryCodeOffset {
            let written = digits.dropFirst(offset + code.count)
            if written == national { return nil }
            dropped =
                written.hasSuffix(national)
                ? (written.dropLast(national.count), offset + code.count ..< digits.count - national.count)
                : nil
        } else {
            // The region's international prefix was read ("0044…" in GB); it ends where the code begins.
            if digits.hasSuffix(code + national) { return nil }
            let beforeNational = digits.dropLast(national.count)
            let length =
                digits.hasSuffix(national)
                ? (1 ..< max(1, beforeNational.count)).first { beforeNational.dropLast($0).hasSuffix(code) } : nil
            dropped = length.map { (beforeNational.suffix($0), beforeNational.count - $0 ..< beforeNational.count) }
        }
        if let dropped, dial.parenthesizedDigits.contains(dropped.range) { return nil }

        if let explicitRegion, (try? countryCode(forRegion: explicitRegion)) == number.countryCode {
            return dropped.map {
                "dropped the trunk prefix \($0.digits) written after +\(code): E.164 numbers have none"
            }
                ?? "the digits after +\(code) were written in \(explicitRegion)'s national form; libphonenumber rewrote them"
        }
        let hasRegion = countryRegion != "001" && countryRegion != "ZZ"
        if let dropped {
            throw CellpathError(
                .dataError,
                "the phone number has the trunk prefix \(dropped.digits) after +\(code), which international form never has",
                hint: "write it without the \(dropped.digits) after +\(code) (SubscriberCheck needs the exact E.164)"
                    + (hasRegion ? ", or pass --region \(countryRegion) to have it dropped" : ""))
        }
        throw CellpathError(
            .dataError, "the digits after +\(code) are written in national form, not as an international number",
            hint: "write the number as E.164 has it"
                + (hasRegion ? ", or pass --region \(countryRegion) to have libphonenumber rewrite it" : ""))
    }

    /// A number from the C result.
    private init(_ parsed: cpn_number) {
        e164 = Self.string(parsed.e164)
        countryCode = Int(parsed.country_code)
        nationalNumber = Self.string(parsed.national_significant_number)
        regionCode = Self.string(parsed.region)
        type = PhoneNumberType(parsed.type)
        isValid = parsed.is_valid
        internationalFormat = Self.string(parsed.international)
    }

    /// The error for a number libphonenumber could not parse at all.
    private static func parseFailure(_ status: cpn_parse_status, dial: DialString, region: String?) -> CellpathError {
        switch status {
        case CPN_PARSE_INVALID_COUNTRY_CODE:
            return CellpathError(
                .dataError, "the phone number does not begin with a known country calling code",
                hint: dial.hasPlus ? "check the digits after '+'" : "give it in international form (+44…)")
        case CPN_PARSE_NOT_A_NUMBER:
            return CellpathError(.dataError, "this is not a phone number")
        case CPN_PARSE_TOO_SHORT_AFTER_IDD:
            return CellpathError(.dataError, "the phone number is too short after its international prefix")
        case CPN_PARSE_TOO_SHORT_NSN:
            return CellpathError(.dataError, "the phone number is too short")
        case CPN_PARSE_TOO_LONG_NSN:
            return CellpathError(.dataError, "the phone number is too long")
        default:
            return CellpathError(
                .internalError, "libphonenumber failed to parse the number (status \(status.rawValue))")
        }
    }

    /// The error for a parsed number that is not valid in its country, saying why.
    private static func invalidity(_ parsed: cpn_number, dial: DialString, region: String?) -> CellpathError {
        let country = string(parsed.country_region)
        let readAsNational = !dial.hasPlus && region != nil
        let place =
            switch country {
            case "ZZ": "+\(parsed.country_code)"
            case "001": "+\(parsed.country_code) (international network)"
            default: country
            }
        let hint: String? =
            if readAsNational && dial.digits.hasPrefix("00") {
                "in \(region ?? place) \"00\" is not the international prefix: write '+' and the country code instead"
            } else if readAsNational {
                "it was read as a national number of \(region ?? place); if it belongs to another country, give it in international form (+44…)"
            } else {
                nil
            }
        let reason: String
        switch parsed.possibility {
        case CPN_POSSIBLE_INVALID_COUNTRY_CODE:
            reason = "+\(parsed.country_code) is not a country calling code in use"
        case CPN_POSSIBLE_TOO_SHORT:
            reason = "it is too short for a \(place) number"
        case CPN_POSSIBLE_TOO_LONG:
            reason = "it is too long for a \(place) number"
        case CPN_POSSIBLE_INVALID_LENGTH:
            reason = "no \(place) number has that many digits"
        case CPN_POSSIBLE_LOCAL_ONLY:
            reason = "it is a local \(place) number without its area code"
        default:
            reason = "no \(place) number begins with these digits"
        }
        return CellpathError(.dataError, "the phone number is not valid: \(reason)", hint: hint)
    }

    /// The NUL-terminated UTF-8 text in a fixed-size C array.
    private static func string<Buffer>(_ buffer: Buffer) -> String {
        withUnsafeBytes(of: buffer) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

extension PhoneNumberType {
    /// The Swift case for a libphonenumber number type.
    fileprivate init(_ type: cpn_number_type) {
        switch type {
        case CPN_TYPE_MOBILE: self = .mobile
        case CPN_TYPE_FIXED_LINE: self = .fixedLine
        case CPN_TYPE_FIXED_LINE_OR_MOBILE: self = .fixedLineOrMobile
        case CPN_TYPE_TOLL_FREE: self = .tollFree
        case CPN_TYPE_PREMIUM_RATE: self = .premiumRate
        case CPN_TYPE_SHARED_COST: self = .sharedCost
        case CPN_TYPE_VOIP: self = .voip
        case CPN_TYPE_PERSONAL_NUMBER: self = .personalNumber
        case CPN_TYPE_PAGER: self = .pager
        case CPN_TYPE_UAN: self = .uan
        case CPN_TYPE_VOICEMAIL: self = .voicemail
        default: self = .unknown
        }
    }
}
