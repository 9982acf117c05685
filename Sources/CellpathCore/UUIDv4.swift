/// Random UUIDs (RFC 9562 version 4), as request and check identifiers are written.
public enum UUIDv4 {
    /// A new random UUID in its lowercase `8-4-4-4-12` form.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0 ..< 16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[6] = bytes[6] & 0x0f | 0x40
        bytes[8] = bytes[8] & 0x3f | 0x80
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text += "-" }
            text += String(byte >> 4, radix: 16) + String(byte & 0x0f, radix: 16)
        }
        return text
    }
}
