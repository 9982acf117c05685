import CellularHTTP

/// `application/x-www-form-urlencoded` bodies, as Twilio's API takes its parameters and as the
/// SNA URL's text answer is written.
enum FormEncoding {
    /// `name=value` pairs joined by `&`, each percent-encoded but for RFC 3986's unreserved characters.
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    /// The pairs of a form body, percent-decoded (`+` is a space).
    static func decode(_ body: String) -> [(name: String, value: String)] {
        Credentials.queryItems(of: "?" + body)
    }

    private static func escape(_ text: String) -> String {
        var escaped = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                escaped +=
                    "%" + String(UnicodeScalar(hex[Int(byte >> 4)])) + String(UnicodeScalar(hex[Int(byte & 0xF)]))
            }
        }
        return escaped
    }
}
