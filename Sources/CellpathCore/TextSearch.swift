/// Finding and replacing text by its UTF-8 bytes. The standard library's `contains(_:)` with a
/// string, `replacing(_:with:)`, `firstRange(of:)`, `trimmingPrefix(_:)` and `split(separator:)`
/// with a string come from `_StringProcessing`, and using any of them links its regex engine into
/// the executable (1.4 MB each, docs/benchmarks.md): cellpath uses these instead. Matching bytes,
/// not characters, also finds what a match by characters misses: a `"\r"` in `"\r\n"` (one
/// character), a quote to escape or a value to redact that a following combining mark joins.
extension StringProtocol {
    /// Whether `other` occurs in this text (an empty `other` always does). It shadows
    /// `_StringProcessing`'s `contains(_:)` in every module that imports CellpathCore.
    public func contains(_ other: String) -> Bool {
        other.isEmpty || range(ofText: other) != nil
    }

    /// The first occurrence of `target`, or nil (also for an empty `target`). Its bounds are
    /// Unicode scalar boundaries: a valid UTF-8 target starts with a leading byte.
    public func range(ofText target: String) -> Range<String.Index>? {
        let pattern = Array(target.utf8)
        guard let first = pattern.first else { return nil }
        let bytes = utf8
        var start = bytes.startIndex
        while let found = bytes[start...].firstIndex(of: first) {
            var end = found
            var matched = 0
            while matched < pattern.count, end < bytes.endIndex, bytes[end] == pattern[matched] {
                bytes.formIndex(after: &end)
                matched += 1
            }
            if matched == pattern.count { return found ..< end }
            start = bytes.index(after: found)
        }
        return nil
    }

    /// This text with every occurrence of `target` replaced by `replacement`, left to right
    /// (a replacement is not searched again). An empty `target` replaces nothing.
    public func replacingEvery(_ target: String, with replacement: String) -> String {
        let pattern = Array(target.utf8)
        guard let first = pattern.first else { return String(self) }
        let source = Array(utf8)
        var result: [UInt8] = []
        result.reserveCapacity(source.count)
        var index = 0
        while index < source.count {
            if source[index] == first, source.count - index >= pattern.count,
                source[index ..< index + pattern.count].elementsEqual(pattern)
            {
                result += replacement.utf8
                index += pattern.count
            } else {
                result.append(source[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
