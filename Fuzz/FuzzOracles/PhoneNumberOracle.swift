import CFuzzPhoneNumber

/// libphonenumber called directly (Parse, then E.164): the reference for the project's
/// phone-number front end.
public enum PhoneNumberOracle {
    /// The E.164 form libphonenumber gives `text` in `region` (nil: none) and whether it is
    /// valid; nil when it does not parse.
    public static func parse(_ text: String, region: String?) -> (e164: String, isValid: Bool)? {
        var buffer = [CChar](repeating: 0, count: 64)
        var valid = false
        guard fuzz_phone_number_e164(text, region ?? "ZZ", &buffer, buffer.count, &valid) else { return nil }
        return (String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), valid)
    }
}
