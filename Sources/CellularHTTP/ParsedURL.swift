import SystemSupport

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
    /// The path, dot segments removed (`/` at least).
    var path: String = "/"

    /// `scheme://host:port`, to tell origins apart.
    var origin: String { "\(scheme)://\(host):\(port)" }

    /// Throws `nonHTTPScheme` unless the scheme is http or https; `hop` is nil for the first URL.
    func requireHTTPScheme(hop: Int?) throws(FetchFailure) {
        guard scheme == "http" || scheme == "https" else {
            let what = hop == nil ? "the URL" : "a redirect"
            throw FetchFailure(
                .nonHTTPScheme, "\(what) uses the \(scheme): scheme; only http and https are allowed", hop: hop)
        }
    }

    /// Throws `malformedURL` unless the host is an address literal or a name DNS can carry: at
    /// most 253 characters, labels of 1 to 63. `hop` is nil for the first URL.
    func requireDNSHostName(hop: Int?) throws(FetchFailure) {
        guard !IPAddress.isNumeric(host) else { return }
        let name = host.hasSuffix(".") ? String(host.dropLast()) : host
        let what = hop == nil ? "the URL's host name" : "the redirect's host name"
        if name.utf8.count > 253 {
            throw FetchFailure(
                .malformedURL, "\(what) \(abbreviatedHost) is \(name.utf8.count) characters long; DNS allows 253",
                hop: hop)
        }
        if let label = name.split(separator: ".", omittingEmptySubsequences: false).first(where: {
            $0.isEmpty || $0.utf8.count > 63
        }) {
            throw FetchFailure(
                .malformedURL,
                label.isEmpty
                    ? "\(what) \(abbreviatedHost) has an empty label"
                    : "\(what) \(abbreviatedHost) has a label of \(label.utf8.count) characters; DNS allows 63",
                hop: hop)
        }
    }

    /// The host for messages: a long name is cut after 40 characters.
    var abbreviatedHost: String { host.count > 64 ? host.prefix(40) + "…" : host }
}
