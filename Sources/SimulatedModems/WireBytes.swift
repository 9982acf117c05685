/// Little-endian byte building for the simulated modems' wire formats.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { bytes.append(UInt8(v & 0xff)); bytes.append(UInt8(v >> 8)) }
    mutating func u32(_ v: UInt32) {
        for s in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((v >> UInt32(s)) & 0xff)) }
    }
    mutating func u64(_ v: UInt64) {
        for s in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8((v >> UInt64(s)) & 0xff)) }
    }
    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    /// Overwrites a little-endian u32 at `offset`.
    mutating func patch32(_ v: UInt32, at offset: Int) {
        for i in 0 ..< 4 { bytes[offset + i] = UInt8((v >> UInt32(8 * i)) & 0xff) }
    }
}

/// Bounds-checked little-endian reading; every accessor returns nil instead of trapping.
struct ByteReader {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func u8(at o: Int) -> UInt8? { o >= 0 && o < bytes.count ? bytes[o] : nil }
    func u16(at o: Int) -> UInt16? {
        guard o >= 0, o + 2 <= bytes.count else { return nil }
        return UInt16(bytes[o]) | UInt16(bytes[o + 1]) << 8
    }
    func u32(at o: Int) -> UInt32? {
        guard o >= 0, o + 4 <= bytes.count else { return nil }
        return (0 ..< 4).reduce(UInt32(0)) { $0 | UInt32(bytes[o + $1]) << UInt32(8 * $1) }
    }
    func slice(_ o: Int, _ n: Int) -> [UInt8]? {
        guard o >= 0, n >= 0, o <= bytes.count, n <= bytes.count - o else { return nil }
        return Array(bytes[o ..< (o + n)])
    }
}

/// The IPv4 netmask of a prefix length, in network byte order.
func ipv4Netmask(prefixLength: Int) -> [UInt8] {
    let p = max(0, min(32, prefixLength))
    let mask: UInt32 = p == 0 ? 0 : ~UInt32(0) << UInt32(32 - p)
    return [UInt8(mask >> 24), UInt8((mask >> 16) & 0xff), UInt8((mask >> 8) & 0xff), UInt8(mask & 0xff)]
}
