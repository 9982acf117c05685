import CellpathCore

extension FetchRequest {
    /// Rejects bad input before any packet: CR/LF or controls in the URL, headers, method; a
    /// malformed URL; a scheme other than http and https.
    public func validate() throws(FetchFailure) {
        if url.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) {
            throw FetchFailure(.malformedURL, "the URL contains control characters (CR/LF/NUL)")
        }
        let tokenChars = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        if method.isEmpty || !method.utf8.allSatisfy(tokenChars.contains) {
            throw FetchFailure(.invalidHeader, "invalid HTTP method")
        }
        for h in headers {
            if h.name.isEmpty || !h.name.utf8.allSatisfy(tokenChars.contains) {
                throw FetchFailure(.invalidHeader, "invalid header name \"\(h.name.filter { !$0.isNewline })\"")
            }
            if h.value.utf8.contains(where: { $0 == 0x0d || $0 == 0x0a || $0 == 0 }) {
                throw FetchFailure(.invalidHeader, "header \(h.name) contains CR, LF or NUL")
            }
        }
        if maxHops < 1 { throw FetchFailure(.malformedURL, "max hops must be at least 1") }
        try Self.checkScheme(try CurlURL.parse(url).get(), hop: nil)
    }

    static func checkScheme(_ url: CurlURL, hop: Int?) throws(FetchFailure) {
        guard url.scheme == "http" || url.scheme == "https" else {
            let what = hop == nil ? "the URL" : "a redirect"
            throw FetchFailure(.nonHTTPScheme, "\(what) uses the \(url.scheme): scheme; only http and https are allowed", hop: hop)
        }
    }
}
