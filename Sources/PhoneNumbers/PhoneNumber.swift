import CellpathCore

/// A phone number checked against the numbering plan of its country (libphonenumber).
///
/// Values come from `PhoneNumber.parse(_:defaultRegion:)`. Interpolating one into a string
/// (`"\(number)"`) gives a redacted form; read `e164` or `display(_:)` to show the number.
public struct PhoneNumber: Sendable, Equatable {
    /// E.164 form with its '+': "+447940448591".
    public let e164: String
    /// The country calling code: 44.
    public let countryCode: Int
    /// The national significant number, without trunk prefix: "7940448591".
    public let nationalNumber: String
    /// The region the number belongs to: "GB"; "001" for non-geographic numbers (+800, +882…);
    /// "ZZ" for a number that is not valid.
    public let regionCode: String
    /// Where the number belongs, for people: "GB", or "international network +882".
    public var place: String { regionCode == "001" ? "international network +\(countryCode)" : regionCode }
    /// What kind of line the numbering plan assigns the number to.
    public let type: PhoneNumberType
    /// True when the number matches a pattern of its country's numbering plan.
    public let isValid: Bool
    /// International format for display: "+44 7940 448591".
    public let internationalFormat: String
    /// What was changed in the digits written after the country code, when an explicit region
    /// allowed it ("dropped the trunk prefix 0 written after +44: …"); nil when nothing was.
    public internal(set) var adjustment: String?

    /// E.164 digits without the '+': "447940448591".
    public var e164Digits: String { String(e164.dropFirst()) }

    /// True when SIM-based checks can apply: the plan says mobile, or cannot tell fixed line
    /// from mobile (as in the US and Canada).
    public var isMobileCapable: Bool { type == .mobile || type == .fixedLineOrMobile }

    /// The international format for display, masked unless `disclosure` is `.full`.
    public func display(_ disclosure: Disclosure) -> String {
        disclosure.reveal(internationalFormat, as: .msisdn)
    }
}

/// The kind of line a number belongs to, as libphonenumber's metadata classifies it.
public enum PhoneNumberType: String, Sendable {
    case mobile, fixedLine, fixedLineOrMobile, tollFree, premiumRate, sharedCost, voip,
        personalNumber, pager, uan, voicemail, unknown

    /// What to call a number of this type in human output: "fixed-line or mobile number".
    public var numberPhrase: String {
        switch self {
        case .mobile: "mobile number"
        case .fixedLine: "fixed-line number"
        case .fixedLineOrMobile: "fixed-line or mobile number"
        case .tollFree: "toll-free number"
        case .premiumRate: "premium-rate number"
        case .sharedCost: "shared-cost number"
        case .voip: "VoIP number"
        case .personalNumber: "personal number"
        case .pager: "pager number"
        case .uan: "universal access number"
        case .voicemail: "voicemail number"
        case .unknown: "number of unknown type"
        }
    }
}

extension PhoneNumber: CustomStringConvertible {
    /// Redacted E.164 ("+••••91"), so that a number interpolated into a log line stays private.
    public var description: String { Disclosure.redacted.reveal(e164, as: .msisdn) }
}
