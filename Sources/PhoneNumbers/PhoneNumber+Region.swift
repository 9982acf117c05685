import CPhoneNumber
import CellpathCore

extension PhoneNumber {
    /// Checks a region code ("gb", "GB") and returns it upper-cased; throws `.dataError` unless
    /// it is two letters naming a region libphonenumber knows. Safe to call from any thread.
    public static func normalizedRegion(_ code: String) throws(CellpathError) -> String {
        let upper = code.uppercased()
        let hint = "use a two-letter ISO 3166 country code such as GB, US, IN or DE"
        guard upper.count == 2, upper.unicodeScalars.allSatisfy({ ("A" ... "Z").contains($0) }) else {
            throw CellpathError(
                .dataError, "the region must be two letters (ISO 3166), not \(quoted(code))", hint: hint)
        }
        if upper == "UK" {
            throw CellpathError(.dataError, "the region code of the United Kingdom is GB, not UK", hint: "pass GB")
        }
        guard cpn_is_supported_region(upper) else {
            throw CellpathError(.dataError, "\(upper) is not a region with a known numbering plan", hint: hint)
        }
        return upper
    }

    /// The country calling code of a region (44 for "GB"), for hints such as "+44…".
    public static func countryCode(forRegion code: String) throws(CellpathError) -> Int {
        Int(cpn_country_code_for_region(try normalizedRegion(code)))
    }

    /// `text` quoted for an error message, with control characters escaped.
    private static func quoted(_ text: String) -> String {
        "\"" + text.unicodeScalars.map { $0.escaped(asASCII: true) }.joined() + "\""
    }
}
