/// Where an OIDC authorization-code device leg ends: the client's `redirect_uri`. The first
/// redirect whose target has the same scheme, host (any case), port (the scheme's default when
/// none is written) and path ends the chain without being requested; its query (`code`,
/// `state` or `error`) is the leg's answer. A look-alike host or a longer path is not the end.
public struct RedirectURIEnd: Sendable, Equatable {
    /// The redirect URI as the client registered it.
    public let redirectURI: String
    private let target: ParsedURL

    /// Throws `malformedURL` or `nonHTTPScheme` for a URI that is not an absolute http(s) URL.
    public init(_ redirectURI: String) throws(FetchFailure) {
        let target = try CurlURL.parse(redirectURI).get()
        try target.requireHTTPScheme(hop: nil)
        self.redirectURI = redirectURI
        self.target = target
    }

    /// Whether the absolute URL `url` (a resolved redirect target) is this redirect URI, its
    /// query and fragment aside.
    public func matches(_ url: String) -> Bool {
        guard case .success(let candidate) = CurlURL.parse(url) else { return false }
        return candidate.scheme == target.scheme && candidate.host.lowercased() == target.host.lowercased()
            && candidate.port == target.port && candidate.path == target.path
    }
}

extension FetchRequest {
    /// Ends the chain at the first redirect to `end`, unrequested; the result's `stoppedAt`
    /// is that redirect's resolved Location, query included.
    public mutating func stop(at end: RedirectURIEnd) {
        stopAtRedirect = { end.matches($0) }
    }
}
