import CCurl

/// libcurl's URL API called directly: the reference the project's Location resolution is
/// compared with.
public enum CurlURLOracle {
    /// `location` resolved against `base` as curl resolves a redirect (CURLUPART_URL set twice),
    /// or nil when curl refuses either.
    public static func resolve(_ location: String, against base: String) -> String? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        let flags = UInt32(CURLU_NON_SUPPORT_SCHEME)
        guard curl_url_set(handle, CURLUPART_URL, base, flags) == CURLUE_OK,
            curl_url_set(handle, CURLUPART_URL, location, flags) == CURLUE_OK
        else { return nil }
        var out: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, CURLUPART_URL, &out, 0) == CURLUE_OK, let out else { return nil }
        defer { curl_free(out) }
        return String(cString: out)
    }
}
