import CCurl

/// Parses and resolves URLs with libcurl's URL API (curl_url), the parser curl itself uses for
/// the request. No I/O; callable from any thread.
enum CurlURL {
    /// Parses an absolute URL (any scheme; callers check it).
    static func parse(_ text: String) -> Result<ParsedURL, FetchFailure> {
        withHandle { handle in
            let rc = cp_curl_url_set(handle, CURLUPART_URL, text, UInt32(CURLU_NON_SUPPORT_SCHEME))
            guard rc == CURLUE_OK else {
                return .failure(FetchFailure(.malformedURL, "malformed URL: \(describe(rc))"))
            }
            return .success(parts(of: handle))
        }
    }

    /// Resolves `location` (absolute or relative, with query or empty path) against `base`.
    static func resolve(_ location: String, against base: ParsedURL) -> Result<ParsedURL, FetchFailure> {
        withHandle { handle in
            var rc = cp_curl_url_set(handle, CURLUPART_URL, base.text, UInt32(CURLU_NON_SUPPORT_SCHEME))
            if rc == CURLUE_OK {
                rc = cp_curl_url_set(handle, CURLUPART_URL, location, UInt32(CURLU_NON_SUPPORT_SCHEME))
            }
            guard rc == CURLUE_OK else {
                return .failure(FetchFailure(.malformedURL, "malformed Location header: \(describe(rc))"))
            }
            return .success(parts(of: handle))
        }
    }

    private static func withHandle(
        _ body: (OpaquePointer) -> Result<ParsedURL, FetchFailure>
    ) -> Result<ParsedURL, FetchFailure> {
        guard let handle = cp_curl_url() else {
            return .failure(FetchFailure(.internalError, CurlLibrary.failure(otherwise: "out of memory")))
        }
        defer { cp_curl_url_cleanup(handle) }
        return body(handle)
    }

    private static func parts(of handle: OpaquePointer) -> ParsedURL {
        func part(_ p: CURLUPart, _ flags: Int32 = 0) -> String? {
            var out: UnsafeMutablePointer<CChar>?
            guard cp_curl_url_get(handle, p, &out, UInt32(flags)) == CURLUE_OK, let out else { return nil }
            defer { cp_curl_free(out) }
            return String(cString: out)
        }
        var host = part(CURLUPART_HOST) ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return ParsedURL(
            text: part(CURLUPART_URL) ?? "", scheme: (part(CURLUPART_SCHEME) ?? "").lowercased(), host: host,
            port: Int(part(CURLUPART_PORT, CURLU_DEFAULT_PORT) ?? "") ?? 0, path: part(CURLUPART_PATH) ?? "/")
    }

    private static func describe(_ rc: CURLUcode) -> String {
        guard let s = cp_curl_url_strerror(rc) else { return "error \(rc.rawValue)" }
        return String(cString: s)
    }
}
