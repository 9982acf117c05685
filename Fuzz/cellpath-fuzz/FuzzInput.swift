/// Reads structured values off a fuzz input, so that one byte string drives several choices.
struct FuzzInput {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    /// The next byte, 0 when the input is used up.
    mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }

    /// One of `choices`, picked by the next byte.
    mutating func pick<T>(_ choices: [T]) -> T { choices[Int(byte()) % choices.count] }

    /// The bytes up to the next newline (or the end), as text; invalid UTF-8 is repaired.
    mutating func line() -> String {
        let end = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let text = String(decoding: bytes[..<end], as: UTF8.self)
        bytes = end < bytes.endIndex ? bytes[(end + 1)...] : []
        return text
    }

    /// A length byte, then up to that many bytes.
    mutating func chunk() -> [UInt8] {
        let count = Int(byte())
        defer { bytes = bytes.dropFirst(count) }
        return Array(bytes.prefix(count))
    }

    /// What is left, as lines.
    mutating func remainingLines() -> [String] {
        var lines: [String] = []
        while !bytes.isEmpty { lines.append(line()) }
        return lines
    }

    /// What is left, as bytes.
    mutating func remaining() -> [UInt8] {
        defer { bytes = [] }
        return Array(bytes)
    }

    var isEmpty: Bool { bytes.isEmpty }
}
