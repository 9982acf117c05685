import FoundationEssentials

/// Base64url without padding (RFC 7515 §2), as JSON Web Keys write numbers and thumbprints.
public enum Base64URL {
    /// `bytes` in base64url, without padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    /// The bytes of base64url `text` (padding optional); nil when it is not base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        var standard = text.replacing("-", with: "+").replacing("_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }
}
