import CCurl

/// libcurl is loaded on first use (CCurl): what a failed handle creation means.
enum CurlLibrary {
    /// Why libcurl could not be loaded when it could not, else `otherwise`.
    static func failure(otherwise: String) -> String {
        cp_curl_load_error().map { String(cString: $0) } ?? otherwise
    }
}
