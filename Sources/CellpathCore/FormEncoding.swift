/// Percent-encoding of URL query and `application/x-www-form-urlencoded` values.
public enum FormEncoding {
    /// Percent-encodes everything except RFC 3986 unreserved characters.
    public static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (byte < 16 ? "0" + hex : hex)
            }
        }
        return out
    }

    /// `name=value` pairs joined by `&`, both sides percent-encoded.
    public static func encode(_ items: [(String, String)]) -> String {
        items.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
    }
}
