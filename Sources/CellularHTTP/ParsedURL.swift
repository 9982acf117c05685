/// An absolute URL split into the parts the redirect rules look at. A plain value: parsing and
/// resolving are done by `CurlURL`.
struct ParsedURL: Sendable, Hashable {
    /// The normalised full URL.
    var text: String
    /// Lower-case scheme.
    var scheme: String
    /// Host name or address literal, without IPv6 brackets.
    var host: String
    /// Port, the scheme's default when the URL has none.
    var port: Int

    /// `scheme://host:port`, to tell origins apart.
    var origin: String { "\(scheme)://\(host):\(port)" }

    /// Throws `nonHTTPScheme` unless the scheme is http or https; `hop` is nil for the first URL.
    func requireHTTPScheme(hop: Int?) throws(FetchFailure) {
        guard scheme == "http" || scheme == "https" else {
            let what = hop == nil ? "the URL" : "a redirect"
            throw FetchFailure(.nonHTTPScheme, "\(what) uses the \(scheme): scheme; only http and https are allowed", hop: hop)
        }
    }
}
