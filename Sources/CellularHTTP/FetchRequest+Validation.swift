import CellpathCore

extension FetchRequest {
    /// Rejects bad input before any packet: CR/LF or controls in the URL, headers, method; a
    /// malformed URL; a scheme other than http and https.
    public func validate() throws(FetchFailure) {
        try RequestInput.check(url: url, method: method, headers: headers + firstRequestHeaders)
        if maxHops < 1 { throw FetchFailure(.malformedURL, "max hops must be at least 1") }
        _ = try RequestInput.parseHTTPURL(url)
    }
}

/// Checks on what a caller asks to send, shared by chains and single requests.
enum RequestInput {
    private static let tokenCharacters = Set(
        "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)

    /// Rejects control characters in the URL, a method that is not a token, header names that
    /// are not tokens and header values with a control character (CR, LF, NUL, any other C0 or
    /// C1 control, DEL; a horizontal tab is allowed, as HTTP allows it).
    static func check(url: String, method: String, headers: [HTTPHeader]) throws(FetchFailure) {
        if url.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) {
            throw FetchFailure(.malformedURL, "the URL contains control characters (CR/LF/NUL)")
        }
        if method.isEmpty || !method.utf8.allSatisfy(tokenCharacters.contains) {
            throw FetchFailure(.invalidHeader, "invalid HTTP method")
        }
        for h in headers {
            if h.name.isEmpty || !h.name.utf8.allSatisfy(tokenCharacters.contains) {
                throw FetchFailure(.invalidHeader, "invalid header name \"\(h.name.filter { !$0.isNewline })\"")
            }
            if let control = h.value.unicodeScalars.first(where: {
                $0 != "\t" && $0.properties.generalCategory == .control
            }) {
                let code =
                    "U+" + String(repeating: "0", count: max(0, 4 - String(control.value, radix: 16).count))
                    + String(control.value, radix: 16, uppercase: true)
                throw FetchFailure(
                    .invalidHeader,
                    "header \(h.name) contains a control character (\(code)); CR, LF, NUL and other controls are refused"
                )
            }
        }
    }

    /// Parses `url`; throws unless it is a well-formed http or https URL whose host DNS can carry.
    static func parseHTTPURL(_ url: String) throws(FetchFailure) -> ParsedURL {
        let parsed = try CurlURL.parse(url).get()
        try parsed.requireHTTPScheme(hop: nil)
        try parsed.requireDNSHostName(hop: nil)
        return parsed
    }
}
