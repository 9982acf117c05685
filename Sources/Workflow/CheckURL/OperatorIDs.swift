import CellpathCore

/// The networks of the device's SIMs as the tru.ID SDKs name them in `x-tru-ops`: MCC and MNC
/// without a separator (`23415`), several separated by commas.
public struct OperatorIDs: Sendable, Equatable {
    /// One network: the mobile country code (3 digits) and network code (2 or 3 digits).
    public struct Network: Sendable, Equatable {
        public var mcc: String
        public var mnc: String
    }

    public let networks: [Network]

    /// Parses `001-01`, `00101`, or several of them separated by commas (`234-15,234-30`).
    /// Anything else, including control characters, is a data error (exit 65).
    public init(parsing text: String) throws(CellpathError) {
        var networks: [Network] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.split(separator: "-", omittingEmptySubsequences: false)
            let digits = parts.joined()
            let isDigits = !digits.isEmpty && digits.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
            let split: (Substring, Substring)? =
                switch parts.count {
                case 2 where parts[0].count == 3 && (2 ... 3).contains(parts[1].count): (parts[0], parts[1])
                case 1 where (5 ... 6).contains(digits.count): (digits.prefix(3)[...], digits.dropFirst(3)[...])
                default: nil
                }
            guard isDigits, let (mcc, mnc) = split else {
                throw CellpathError(
                    .dataError,
                    "invalid operator '\(Self.printable(text))': use MCC-MNC (3 digits, '-', 2 or 3 digits), several separated by commas",
                    hint: "e.g. --operator 234-15 or --operator 234-15,234-30")
            }
            networks.append(Network(mcc: String(mcc), mnc: String(mnc)))
        }
        self.networks = networks
    }

    /// The `x-tru-ops` value: `00101`, or `23415,23430` for several SIMs.
    public var headerValue: String { networks.map { $0.mcc + $0.mnc }.joined(separator: ",") }

    /// `text` with control characters escaped, for an error message.
    private static func printable(_ text: String) -> String {
        text.unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7f ? "\\u{\(String($0.value, radix: 16))}" : String($0)
        }.joined()
    }
}
