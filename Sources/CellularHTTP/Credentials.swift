import CellpathCore

/// Which names carry credentials (codes, assertions, sessions, tokens, keys, passwords), in a
/// URL's query or fragment, a JSON body or a header, and the URL parts that hold them.
/// The one rule behind every mask of a fetch's output (docs/fetch.md, "What is masked").
public enum Credentials {
    /// Names that are credentials as they are (compared lower-case, `-` read as `_`).
    static let names: Set<String> = [
        "code", "auth_code", "authcode", "otp", "pin", "sig", "sid", "jwt", "key", "apikey", "pwd", "passwd",
        "assertion", "session", "password", "secret", "token", "signature", "credential", "credentials",
        "samlresponse", "samlrequest", "ticket",
        // OIDC's PKCE secret, and an authorize URL's hint: the subscriber's phone number.
        "code_verifier", "login_hint"
    ]
    /// Endings that make a name a credential (`access_token`, `client_secret`, `x_api_key`, `jsessionid`).
    static let endings = [
        "token", "secret", "password", "assertion", "session", "sessionid", "session_id",
        "signature", "credential", "credentials", "_key", "apikey", "auth_code"
    ]

    /// True when a parameter, JSON key or header called `name` holds a credential. `name` may be
    /// percent-encoded (`%63ode` is `code`).
    public static func isCredential(_ name: String) -> Bool {
        let normalised = String(percentDecoded(name).lowercased().map { $0 == "-" ? "_" : $0 })
        return names.contains(normalised) || endings.contains { normalised.hasSuffix($0) }
    }

    /// The `name=value` pairs of a URL's query (and fragment, when it has pairs), percent-decoded
    /// (`+` is a space in a query). Pairs without `=` get an empty value.
    public static func queryItems(of url: String) -> [(name: String, value: String)] {
        guard let start = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return [] }
        return url[url.index(after: start)...].split(whereSeparator: { $0 == "&" || $0 == "#" || $0 == "?" }).map {
            pair in
            let name = pair.prefix { $0 != "=" }
            let value = pair.dropFirst(name.count + 1)
            return (percentDecoded(String(name), plusIsSpace: true), percentDecoded(String(value), plusIsSpace: true))
        }
    }

    /// `text` with `%XX` escapes decoded; malformed escapes and bytes that are not UTF-8 are kept
    /// as they were.
    static func percentDecoded(_ text: String, plusIsSpace: Bool = false) -> String {
        guard text.contains("%") || (plusIsSpace && text.contains("+")) else { return text }
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let high = utf8[utf8.startIndex].hexDigitValue,
                let low = utf8[utf8.startIndex + 1].hexDigitValue
            {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? text
    }
}
