/// Where something starts in a text file: 1-based line and column (columns count characters).
public struct TextPosition: Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    /// `line:column`, as compilers print it after a file name.
    public var description: String { "\(line):\(column)" }
}

/// A JSON value as written in its document, with the position where it starts. Numbers keep
/// their text, so that an integer field can tell `40` from `40.5` and `4e1`.
public struct JSONNode: Sendable {
    public enum Value: Sendable {
        case null
        case bool(Bool)
        case number(String)
        case string(String)
        case array([JSONNode])
        /// Members in document order; keys are unique.
        case object([Member])
    }

    /// An object member: its key, where the key starts, and its value.
    public struct Member: Sendable {
        public var key: String
        public var keyPosition: TextPosition
        public var value: JSONNode
    }

    public var value: Value
    public var position: TextPosition
}

/// Why a document is not strict JSON, and where.
public struct JSONSyntaxError: Error, Sendable, Equatable {
    public var message: String
    public var position: TextPosition
}

/// A strict RFC 8259 parser, for files people write by hand (the scenario) and for what servers
/// send (`JSONValue.parse`): it keeps members in document order, reports the line
/// and column of the first error, and refuses what lenient parsers let through silently:
/// trailing commas, duplicate keys, control characters in strings, invalid UTF-8, lone
/// surrogates, comments, and anything after the top-level value. A leading UTF-8 byte order
/// mark is skipped. Any thread.
public struct StrictJSONParser {
    /// Deepest nesting of arrays and objects accepted (the parser recurses).
    static let maximumDepth = 64
    /// Members up to which an object's keys are scanned for a duplicate rather than indexed.
    static let scannedMembers = 16

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    /// Byte offset where the current line starts, to count columns in characters.
    private var lineStart = 0
    /// Characters counted on the current line up to a byte index, so that each value's position
    /// costs only the bytes since the previous one (a one-line document stays linear).
    private var counted = (index: 0, characters: 0)

    /// Parses a whole document.
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONNode {
        var parser = StrictJSONParser(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            parser.index = 3
            parser.lineStart = 3
        }
        parser.skipWhitespace()
        if parser.index == bytes.count { throw parser.error("the file is empty: expected a JSON object") }
        let node = try parser.value(depth: 0)
        parser.skipWhitespace()
        if parser.index < bytes.count {
            throw parser.error("unexpected \(parser.describeCurrent()) after the end of the document")
        }
        return node
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    // MARK: Values

    private mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        let start = currentPosition()
        guard index < bytes.count else { throw error("unexpected end of file: expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return JSONNode(value: try object(depth: depth + 1), position: start)
        case UInt8(ascii: "["): return JSONNode(value: try array(depth: depth + 1), position: start)
        case UInt8(ascii: "\""): return JSONNode(value: .string(try string()), position: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0") ... UInt8(ascii: "9"):
            return JSONNode(value: .number(try number()), position: start)
        case UInt8(ascii: "t"): try literal("true"); return JSONNode(value: .bool(true), position: start)
        case UInt8(ascii: "f"): try literal("false"); return JSONNode(value: .bool(false), position: start)
        case UInt8(ascii: "n"): try literal("null"); return JSONNode(value: .null, position: start)
        default: throw error("unexpected \(describeCurrent()): expected a value")
        }
    }

    private mutating func object(depth: Int) throws(JSONSyntaxError) -> JSONNode.Value {
        if depth > Self.maximumDepth { throw error("nested deeper than \(Self.maximumDepth) levels") }
        index += 1  // {
        var members: [JSONNode.Member] = []
        // Duplicate keys are looked for by a scan while an object is small (a record's dozen
        // members: cheaper than hashing every key), by an index of its keys once it is large.
        var keyIndex: [String: Int]?
        skipWhitespace()
        if peek == UInt8(ascii: "}") { index += 1; return .object([]) }
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "\"") else {
                if peek == UInt8(ascii: "}") { throw error("trailing comma before '}'") }
                throw error("unexpected \(describeCurrent()): expected a key in double quotes")
            }
            let keyPosition = currentPosition()
            let key = try string()
            let earlier: Int? = if let keyIndex { keyIndex[key] } else { members.firstIndex { $0.key == key } }
            if let earlier {
                let first = members[earlier].keyPosition
                throw JSONSyntaxError(
                    message: "duplicate key \"\(key)\" (first at line \(first.line), column \(first.column))",
                    position: keyPosition)
            }
            if keyIndex == nil, members.count >= Self.scannedMembers {
                keyIndex = Dictionary(uniqueKeysWithValues: members.enumerated().map { ($1.key, $0) })
            }
            keyIndex?[key] = members.count
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else {
                throw error("unexpected \(describeCurrent()): expected ':' after the key")
            }
            index += 1
            skipWhitespace()
            members.append(JSONNode.Member(key: key, keyPosition: keyPosition, value: try value(depth: depth)))
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: throw error("unexpected \(describeCurrent()): expected ',' or '}' after a member")
            }
        }
    }

    private mutating func array(depth: Int) throws(JSONSyntaxError) -> JSONNode.Value {
        if depth > Self.maximumDepth { throw error("nested deeper than \(Self.maximumDepth) levels") }
        index += 1  // [
        var items: [JSONNode] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") { index += 1; return .array([]) }
        while true {
            skipWhitespace()
            if peek == UInt8(ascii: "]") { throw error("trailing comma before ']'") }
            items.append(try value(depth: depth))
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(items)
            default: throw error("unexpected \(describeCurrent()): expected ',' or ']' after an element")
            }
        }
    }

    private mutating func literal(_ word: String) throws(JSONSyntaxError) {
        let expected = Array(word.utf8)
        guard bytes[index...].starts(with: expected) else {
            throw error("unexpected \(describeCurrent()): expected a value")
        }
        index += expected.count
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, returned as written.
    private mutating func number() throws(JSONSyntaxError) -> String {
        let start = index
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let first = peek, isDigit(first) else { throw error("a number needs a digit after '-'") }
        index += 1
        if first == UInt8(ascii: "0"), let next = peek, isDigit(next) {
            throw error("a number must not start with 0 (leading zeros)")
        }
        while let c = peek, isDigit(c) { index += 1 }
        if peek == UInt8(ascii: ".") {
            index += 1
            guard let c = peek, isDigit(c) else { throw error("a number needs digits after '.'") }
            while let c = peek, isDigit(c) { index += 1 }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let c = peek, isDigit(c) else { throw error("a number needs digits in its exponent") }
            while let c = peek, isDigit(c) { index += 1 }
        }
        return String(decoding: bytes[start ..< index], as: UTF8.self)
    }

    /// A string literal: escapes decoded, UTF-8 checked, control characters refused.
    private mutating func string() throws(JSONSyntaxError) -> String {
        index += 1  // opening quote
        // Most strings have no escape: one slice, validated as UTF-8 at once (Swift's check is
        // the same well-formedness rule as `utf8Scalar`). Anything else, errors included, takes
        // the scalar-by-scalar path below.
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20
        { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\""),
            let text = String(validating: bytes[index ..< end], as: UTF8.self)
        {
            index = end + 1
            return text
        }
        var scalars = String.UnicodeScalarView()
        while true {
            guard index < bytes.count else { throw error("unexpected end of file inside a string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                scalars.append(try escape())
            case 0x00 ..< 0x20:
                let name =
                    byte == 0x0A
                    ? "a line break" : byte == 0x09 ? "a tab" : "control character U+\(hex(UInt32(byte), width: 4))"
                throw error(
                    "\(name) inside a string (write it as an escape such as \\n or \\u\(hex(UInt32(byte), width: 4)), or close the string)"
                )
            case 0x00 ..< 0x80:
                scalars.append(Unicode.Scalar(byte))
                index += 1
            default:
                scalars.append(try utf8Scalar())
            }
        }
    }

    private mutating func escape() throws(JSONSyntaxError) -> Unicode.Scalar {
        index += 1  // backslash
        guard let c = peek else { throw error("unexpected end of file inside a string") }
        index += 1
        switch c {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try hexQuad()
            if (0xDC00 ... 0xDFFF).contains(high) {
                throw error("a lone low surrogate \\u\(hex(high, width: 4)) in a string", back: 6)
            }
            guard (0xD800 ... 0xDBFF).contains(high) else { return Unicode.Scalar(high)! }
            guard bytes[index...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else {
                throw error("a high surrogate \\u\(hex(high, width: 4)) not followed by a low one", back: 6)
            }
            index += 2
            let low = try hexQuad()
            guard (0xDC00 ... 0xDFFF).contains(low) else {
                throw error("\\u\(hex(low, width: 4)) is not a low surrogate", back: 6)
            }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
        default:
            index -= 2
            let shown =
                (0x21 ..< 0x7F).contains(c)
                ? String(Character(Unicode.Scalar(c))) : "(byte 0x\(hex(UInt32(c), width: 2)))"
            throw error("invalid escape \\\(shown) in a string")
        }
    }

    private mutating func hexQuad() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0 ..< 4 {
            guard let digit = peek?.hexDigitValue.map(UInt32.init) else {
                throw error("\\u needs four hexadecimal digits")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// One multi-byte UTF-8 sequence (shortest form, no surrogates, at most U+10FFFF).
    private mutating func utf8Scalar() throws(JSONSyntaxError) -> Unicode.Scalar {
        let lead = bytes[index]
        let (count, minimum, initial): (Int, UInt32, UInt32) =
            switch lead {
            case 0xC2 ... 0xDF: (2, 0x80, UInt32(lead & 0x1F))
            case 0xE0 ... 0xEF: (3, 0x800, UInt32(lead & 0x0F))
            case 0xF0 ... 0xF4: (4, 0x10000, UInt32(lead & 0x07))
            default: (0, 0, 0)
            }
        guard count > 0, index + count <= bytes.count else {
            throw error("invalid UTF-8 (byte 0x\(hex(UInt32(lead), width: 2)))")
        }
        var value = initial
        for offset in 1 ..< count {
            let next = bytes[index + offset]
            guard next & 0xC0 == 0x80 else { throw error("invalid UTF-8 (byte 0x\(hex(UInt32(lead), width: 2)))") }
            value = value << 6 | UInt32(next & 0x3F)
        }
        guard value >= minimum, let scalar = Unicode.Scalar(value) else {
            throw error("invalid UTF-8 (byte 0x\(hex(UInt32(lead), width: 2)))")
        }
        index += count
        return scalar
    }

    // MARK: Positions and messages

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// The position of `index`; columns count characters (UTF-8 continuation bytes are skipped).
    private var position: TextPosition {
        let characters = bytes[lineStart ..< min(index, bytes.count)].lazy.filter { $0 & 0xC0 != 0x80 }.count
        return TextPosition(line: line, column: characters + 1)
    }

    /// `position`, counting only the bytes not counted before on this line.
    private mutating func currentPosition() -> TextPosition {
        let end = min(index, bytes.count)
        if counted.index < lineStart || counted.index > end { counted = (lineStart, 0) }
        var characters = counted.characters
        for byte in bytes[counted.index ..< end] where byte & 0xC0 != 0x80 { characters += 1 }
        counted = (end, characters)
        return TextPosition(line: line, column: characters + 1)
    }

    private mutating func skipWhitespace() {
        while let c = peek {
            switch c {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    /// An error at the current position, or `back` bytes before it (on the same line).
    private func error(_ message: String, back: Int = 0) -> JSONSyntaxError {
        var at = position
        at.column = max(1, at.column - back)
        return JSONSyntaxError(message: message, position: at)
    }

    private func describeCurrent() -> String {
        guard let c = peek else { return "end of file" }
        switch c {
        case UInt8(ascii: "/"): return "'/' (comments are not allowed in JSON)"
        case UInt8(ascii: "'"): return "\"'\" (JSON strings use double quotes)"
        default: return describe(c)
        }
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21 ..< 0x7F).contains(byte)
            ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(hex(UInt32(byte), width: 2))"
    }

    private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    private func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
