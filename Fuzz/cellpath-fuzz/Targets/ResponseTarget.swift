import CellpathCore
import Workflow

@testable import CellularHTTP

/// What a server on the path controls and cellpath shows: header values and URLs (masked by
/// `redactedHeader` / `redactedURL`, then made terminal-safe), and JSON bodies (masked by
/// `JSONValue.redacted`, read as a v0.2 callback or an RFC 7807 problem). The input is used
/// whole as each of them: a URL, a header line `Name: value`, and a JSON body.
///
/// Invariants: no control character or bidirectional override survives `terminalSafe`, and
/// text without any is left as it is; after masking, every credential parameter of a URL (as
/// `Credentials.queryItems` reads it) and the URL's password are empty or `[redacted]`, and so
/// are cookie values and Authorization; every string, number or boolean under a credential key of
/// a JSON body is `[redacted]`; a callback is recognised exactly when the body has a string
/// `check_id` and a string `code` or `error`.
enum ResponseTarget: FuzzTarget {
    static let name = "response"
    static let mask = "[redacted]"

    static func run(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        checkTerminalSafe(text)
        checkURL(text)
        if let colon = text.firstIndex(of: ":") {
            let value = text[text.index(after: colon)...].drop { $0 == " " }
            checkHeader(HTTPHeader(String(text[..<colon]), String(value)))
        }
        if let json = JSONValue.parse(input) { checkBody(json) }
    }

    static func checkTerminalSafe(_ text: String) {
        let safe = text.terminalSafe
        require(!safe.unicodeScalars.contains(where: isUnsafe), "terminalSafe kept a control character: \(shown(safe))")
        if !text.unicodeScalars.contains(where: isUnsafe) {
            require(safe == text, "terminalSafe changed safe text \(shown(text))")
        }
    }

    /// The characters a terminal acts on (C0, DEL, C1, bidirectional controls), as docs/fetch.md lists them.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F ... 0x9F).contains(scalar.value) || [0x200E, 0x200F].contains(scalar.value)
            || (0x202A ... 0x202E).contains(scalar.value) || (0x2066 ... 0x2069).contains(scalar.value)
    }

    static func checkURL(_ url: String) {
        let masked = redactedURL(url)
        for item in Credentials.queryItems(of: masked) where Credentials.isCredential(item.name) {
            require(
                item.value.isEmpty || item.value == mask,
                "credential \(shown(item.name)) unmasked in \(shown(masked)) (from \(shown(url)))")
        }
        if let password = password(of: masked) {
            require(password.isEmpty || password == mask, "password unmasked in \(shown(masked))")
        }
        require(redactedURL(url, .full) == url, "--verbose-full changed the URL")
    }

    /// The password of `scheme://user:password@host…`, read as curl reads the authority.
    static func password(of url: String) -> String? {
        guard let colon = url.firstIndex(where: { "/?#:".contains($0) }), url[colon] == ":",
            url[url.index(after: colon)...].hasPrefix("//")
        else { return nil }
        let rest = url[url.index(colon, offsetBy: 3)...]
        let authority = rest.prefix { !"/?#".contains($0) }
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
            return nil
        }
        return String(authority[authority.index(after: colon) ..< at])
    }

    static func checkHeader(_ header: HTTPHeader) {
        let masked = redactedHeader(header, .redacted)
        require(masked.name == header.name, "the header name changed")
        switch header.name.lowercased() {
        case "authorization", "proxy-authorization":
            require(
                masked.value.hasSuffix(mask) || header.value.isEmpty, "Authorization unmasked: \(shown(masked.value))")
        case "cookie":
            for pair in masked.value.split(separator: ";") {
                guard let eq = pair.firstIndex(of: "=") else { continue }
                let value = pair[pair.index(after: eq)...]
                require(value.isEmpty || value == mask, "a cookie value unmasked: \(shown(masked.value))")
            }
        case "set-cookie":
            let first = masked.value.prefix { $0 != ";" }
            if let eq = first.firstIndex(of: "=") {
                let value = first[first.index(after: eq)...]
                require(value.isEmpty || value == mask, "a Set-Cookie value unmasked: \(shown(masked.value))")
            }
        case "location", "content-location", "referer", "refresh":
            checkURL(header.value)
        default:
            if Credentials.isCredential(header.name) {
                require(masked.value.isEmpty || masked.value == mask, "header \(shown(header.name)) unmasked")
            }
        }
        checkTerminalSafe(masked.value)
    }

    static func checkBody(_ json: JSONValue) {
        let masked = json.redacted(.redacted)
        requireMasked(masked, underCredential: false)
        require(json.redacted(.full) == json, "--verbose-full changed the body")

        let callback = CheckCallback(recognizing: json)
        let recognisable =
            json[string: "check_id"] != nil && (json[string: "code"] != nil || json[string: "error"] != nil)
        require((callback != nil) == recognisable, "callback recognition disagrees with the body's members")
        if let callback {
            require(
                callback.checkID == json[string: "check_id"] && callback.code == json[string: "code"], "callback fields"
            )
        }
        if let problem = Problem(json), let key = problem.key, let type = problem.type {
            require(type.hasSuffix("#" + key) && !key.contains("#"), "problem key \(shown(key)) of \(shown(type))")
        }
    }

    /// No scalar under a credential key is left as it was.
    static func requireMasked(_ value: JSONValue, underCredential: Bool) {
        switch value {
        case .object(let members):
            for (key, member) in members {
                requireMasked(member, underCredential: underCredential || Credentials.isCredential(key))
            }
        case .array(let items):
            for item in items { requireMasked(item, underCredential: underCredential) }
        case .string(let text):
            if underCredential {
                require(text.isEmpty || text == mask, "a credential left in a JSON body: \(shown(text))")
            }
        case .int, .double, .bool:
            if underCredential {
                require(false, "a credential number or boolean left in a JSON body: \(value.serialized)")
            }
        case .null:
            break
        }
    }
}
