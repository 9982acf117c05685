import CCurl

/// A URL parsed by libcurl's URL API (curl_url); owns its CURLU handle. Chain thread only.
final class CurlURL {
    private let handle: OpaquePointer

    private init(handle: OpaquePointer) { self.handle = handle }

    deinit { curl_url_cleanup(handle) }

    /// Parses an absolute URL; nil error when it is accepted (any scheme; callers check it).
    static func parse(_ text: String) -> Result<CurlURL, FetchFailure> {
        guard let h = curl_url() else { return .failure(FetchFailure(.internalError, "out of memory")) }
        let url = CurlURL(handle: h)
        let rc = curl_url_set(h, CURLUPART_URL, text, UInt32(CURLU_NON_SUPPORT_SCHEME))
        guard rc == CURLUE_OK else { return .failure(FetchFailure(.malformedURL, "malformed URL: \(describe(rc))")) }
        return .success(url)
    }

    /// Resolves `location` (absolute or relative, with query or empty path) against this URL.
    func resolving(_ location: String) -> Result<CurlURL, FetchFailure> {
        guard let h = curl_url_dup(handle) else { return .failure(FetchFailure(.internalError, "out of memory")) }
        let url = CurlURL(handle: h)
        let rc = curl_url_set(h, CURLUPART_URL, location, UInt32(CURLU_NON_SUPPORT_SCHEME))
        guard rc == CURLUE_OK else {
            return .failure(FetchFailure(.malformedURL, "malformed Location header: \(CurlURL.describe(rc))"))
        }
        return .success(url)
    }

    private func part(_ p: CURLUPart, _ flags: Int32 = 0) -> String? {
        var out: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, p, &out, UInt32(flags)) == CURLUE_OK, let out else { return nil }
        defer { curl_free(out) }
        return String(cString: out)
    }

    /// The normalised full URL.
    var text: String { part(CURLUPART_URL) ?? "" }
    /// Lower-case scheme.
    var scheme: String { (part(CURLUPART_SCHEME) ?? "").lowercased() }
    /// Host name or address literal, without IPv6 brackets.
    var host: String {
        var h = part(CURLUPART_HOST) ?? ""
        if h.hasPrefix("["), h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        return h
    }
    /// Port, the scheme's default when the URL has none.
    var port: Int { Int(part(CURLUPART_PORT, CURLU_DEFAULT_PORT) ?? "") ?? 0 }
    /// `scheme://host:port`, to tell origins apart.
    var origin: String { "\(scheme)://\(host):\(port)" }

    private static func describe(_ rc: CURLUcode) -> String {
        guard let s = curl_url_strerror(rc) else { return "error \(rc.rawValue)" }
        return String(cString: s)
    }
}
