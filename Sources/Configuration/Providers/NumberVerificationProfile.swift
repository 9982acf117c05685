import CellpathCore

/// Where Vonage's network APIs are (`verify --provider vonage-nv`, `sim-swap --provider
/// vonage`): the APIs and the token and backchannel endpoints (`/oauth2/token`,
/// `/oauth2/bc-authorize`), and the OpenID provider's authorize endpoint (`/oauth2/auth`); the
/// application's credentials are the `[vonage]` profile's.
public struct VonageNetworkProfile: Sendable, Equatable {
    public var apiBase: String
    public var oidcBase: String
}

extension EffectiveConfiguration {
    /// The `[camara]` redirect URI of Number Verification, or a `.configuration` error.
    public func requireCAMARARedirectURI() throws(CellpathError) -> String {
        try require(.camaraRedirectURI, for: "camara")
    }

    /// Vonage's network API endpoints, or a `.configuration` error naming `provider`.
    public func requireVonageNetworkProfile(for provider: String) throws(CellpathError) -> VonageNetworkProfile {
        VonageNetworkProfile(
            apiBase: try require(.vonageNetworkAPIBase, for: provider),
            oidcBase: try require(.vonageOIDCBase, for: provider))
    }

    /// The Vonage application's redirect URI of Number Verification, or a `.configuration` error.
    public func requireVonageRedirectURI() throws(CellpathError) -> String {
        try require(.vonageRedirectURI, for: "vonage-nv")
    }
}
