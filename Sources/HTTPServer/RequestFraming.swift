/// The checks of a request's framing that libmicrohttpd 0.9.75 does not make: a request whose
/// end is ambiguous (two `Content-Length`s, `Content-Length` with `Transfer-Encoding`, a header
/// name holding spaces) lets a second request hide in its body, as in request smuggling, and an
/// HTTP/1.1 request needs exactly one `Host`.
enum RequestFraming {
    /// Why the request with this `version` (`HTTP/1.1`) and header fields must be refused with
    /// 400, or nil when its framing is sound.
    static func problem(version: String, headers: [(name: String, value: String)]) -> String? {
        if headers.contains(where: { !isToken($0.name) }) {
            return "a header name that is not a token (a space before the colon?)"
        }
        func values(_ name: String) -> [String] {
            headers.filter { $0.name.lowercased() == name }.map { $0.value.trimmingWhitespace }
        }
        let lengths = values("content-length"), encodings = values("transfer-encoding"), hosts = values("host")
        if lengths.count > 1 { return "more than one Content-Length" }
        if let length = lengths.first, length.isEmpty || !length.utf8.allSatisfy({ (0x30 ... 0x39).contains($0) }) {
            return "Content-Length is not a number"
        }
        if !lengths.isEmpty && !encodings.isEmpty { return "both Content-Length and Transfer-Encoding" }
        if encodings.count > 1 || encodings.contains(where: { $0.lowercased() != "chunked" }) {
            return "a Transfer-Encoding other than chunked"
        }
        if hosts.count > 1 { return "more than one Host" }
        if version.uppercased() == "HTTP/1.1" && hosts.isEmpty { return "no Host" }
        return nil
    }

    /// Whether `name` is an RFC 9110 token (the characters a header name may hold).
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (0x30 ... 0x39).contains(byte) || (0x41 ... 0x5A).contains(byte) || (0x61 ... 0x7A).contains(byte)
                    || "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingWhitespace: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
