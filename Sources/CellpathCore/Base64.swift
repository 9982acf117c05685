/// Base64 (RFC 4648 §4): HTTP Basic credentials, webhook digests and signatures.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `bytes` in base64, padded with `=`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let bytes = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for digit in 0 ..< 4 {
                out.append(digit <= count ? alphabet[Int(group >> UInt32(18 - 6 * digit) & 0x3f)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of padded base64 `text`; nil when it is not that (a length not a multiple of
    /// four, a character outside the alphabet, padding anywhere but at the end).
    public static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 4 == 0 else { return nil }
        let padding = digits.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 4 * 3)
        var group: UInt32 = 0
        for (index, digit) in digits.prefix(digits.count - padding).enumerated() {
            guard let value = alphabet.firstIndex(of: digit) else { return nil }
            group = group << 6 | UInt32(value)
            if index % 4 == 3 {
                out += [UInt8(group >> 16 & 0xff), UInt8(group >> 8 & 0xff), UInt8(group & 0xff)]
                group = 0
            }
        }
        switch padding {
        case 1: out += [UInt8(group >> 10 & 0xff), UInt8(group >> 2 & 0xff)]
        case 2: out.append(UInt8(group >> 4 & 0xff))
        default: break
        }
        return out
    }
}

/// Base64url without padding (RFC 7515 §2), as JSON Web Keys write numbers and thumbprints.
public enum Base64URL {
    /// `bytes` in base64url, without padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        String(Base64.encode(bytes).compactMap { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 == "=" ? nil : $0 })
    }

    /// The bytes of base64url `text` (padding optional); nil when it is not base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.count % 4 != 0 { standard += "=" }
        return Base64.decode(standard)
    }
}
