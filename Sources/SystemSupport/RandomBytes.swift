/// Random identifiers from the system's cryptographic generator.
public enum RandomBytes {
    /// `count` random bytes as lowercase hex (2 × `count` characters).
    public static func hex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for _ in 0 ..< count {
            let byte = UInt8.random(in: 0 ... 255, using: &generator)
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
