import CellpathCore

/// Percent-encoding and form decoding for URLs the fake services build and read.
enum WebEncoding {
    /// Percent-encodes everything except RFC 3986 unreserved characters.
    static func percentEncode(_ text: String) -> String { FormEncoding.percentEncode(text) }

    /// Decodes `%XX` and (for forms) `+` as space; nil on a malformed escape.
    static func percentDecode(_ text: String, plusIsSpace: Bool = true) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let h = iterator.next(), let l = iterator.next(),
                    let value = UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else if byte == UInt8(ascii: "+") && plusIsSpace {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses an `application/x-www-form-urlencoded` body; nil on a malformed escape.
    static func formFields(_ body: [UInt8]) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecode(String(parts[0])),
                let value = percentDecode(parts.count > 1 ? String(parts[1]) : "")
            else { return nil }
            fields[name] = value
        }
        return fields
    }

    /// The user name and password of a Basic `Authorization` header; nil for anything else.
    static func basicCredentials(_ header: String?) -> (String, String)? {
        guard let header, header.lowercased().hasPrefix("basic "),
            let data = Base64.decode(String(header.dropFirst("basic ".count)).trimmedSpaces)
        else {
            return nil
        }
        let text = String(decoding: data, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// Appends query parameters to a URL that may already have a query.
    static func appending(_ items: [(String, String)], to url: String) -> String {
        guard !items.isEmpty else { return url }
        let query = FormEncoding.encode(items)
        return url + (url.contains("?") ? "&" : "?") + query
    }
}

/// E.164 numbers as the tru.ID API accepts them: with or without '+', 7 to 15 digits.
enum PhoneNumberFormat {
    /// The number as `+digits`, or nil when it is not E.164.
    static func e164(_ text: String) -> String? {
        let digits = text.hasPrefix("+") ? text.dropFirst() : Substring(text)
        guard (7 ... 15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            digits.first != "0"
        else { return nil }
        return "+" + digits
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmedSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first ... last])
    }
}
