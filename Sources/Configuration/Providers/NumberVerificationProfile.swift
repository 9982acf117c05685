import CellpathCore

/// Where Vonage's Number Verification is (`verify --provider vonage-nv`): its network APIs
/// (`/oauth2/token`, `/camara/number-verification/v031/verify`), its OpenID provider
/// (`/oauth2/auth`) and the application's redirect URI; the application's credentials are the
/// `[vonage]` profile's.
public struct VonageNetworkProfile: Sendable, Equatable {
    public var apiBase: String
    public var oidcBase: String
    public var redirectURI: String
}

extension EffectiveConfiguration {
    /// The `[camara]` redirect URI of Number Verification, or a `.configuration` error.
    public func requireCAMARARedirectURI() throws(CellpathError) -> String {
        try require(.camaraRedirectURI, for: "camara")
    }

    /// Vonage's Number Verification endpoints and redirect URI, or a `.configuration` error.
    public func requireVonageNetworkProfile() throws(CellpathError) -> VonageNetworkProfile {
        let provider = "vonage-nv"
        return VonageNetworkProfile(
            apiBase: try require(.vonageNetworkAPIBase, for: provider),
            oidcBase: try require(.vonageOIDCBase, for: provider),
            redirectURI: try require(.vonageRedirectURI, for: provider))
    }
}
