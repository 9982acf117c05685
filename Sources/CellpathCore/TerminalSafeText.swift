extension String {
    /// The text with everything a terminal would act on instead of showing escaped: control
    /// characters (C0, DEL, C1, so also ESC sequences), line breaks and the bidirectional
    /// overrides that reorder what is shown. For text from outside (a server, a file, argv)
    /// in human output: `"a\u{1B}[2Jb"` is shown as `a\x1b[2Jb`.
    public var terminalSafe: String {
        guard unicodeScalars.contains(where: Self.isUnsafe) else { return self }
        var out = ""
        for scalar in unicodeScalars {
            guard Self.isUnsafe(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x100:
                let hex = String(scalar.value, radix: 16)
                out += "\\x" + (hex.count == 1 ? "0" : "") + hex
            default: out += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        return out
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0 ..< 0x20, 0x7F ... 0x9F, 0x200E, 0x200F, 0x202A ... 0x202E, 0x2066 ... 0x2069: true
        default: false
        }
    }
}
