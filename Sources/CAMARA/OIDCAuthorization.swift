import CellpathCore
import CellpathCrypto
import CellularHTTP
import SystemSupport

/// The endpoints an OpenID provider publishes at `/.well-known/openid-configuration`.
public struct ProviderMetadata: Sendable, Equatable {
    public var issuer: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    /// CIBA's backchannel authentication endpoint, when the provider offers it.
    public var backchannelAuthenticationEndpoint: String?

    public init(
        issuer: String, authorizationEndpoint: String, tokenEndpoint: String,
        backchannelAuthenticationEndpoint: String? = nil
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.backchannelAuthenticationEndpoint = backchannelAuthenticationEndpoint
    }

    /// The metadata of `json`, when it names `issuer` (OpenID Connect Discovery 4.3) and both
    /// endpoints as http(s) URLs.
    init?(json: JSONValue, issuer: String) {
        guard json[string: "issuer"].map({ $0.hasSuffix("/") ? String($0.dropLast()) : $0 }) == issuer,
            let authorization = json[string: "authorization_endpoint"],
            let token = json[string: "token_endpoint"],
            [authorization, token].allSatisfy({ $0.hasPrefix("https://") || $0.hasPrefix("http://") })
        else { return nil }
        self.issuer = issuer
        authorizationEndpoint = authorization
        tokenEndpoint = token
        backchannelAuthenticationEndpoint = json[string: "backchannel_authentication_endpoint"].flatMap {
            $0.hasPrefix("https://") || $0.hasPrefix("http://") ? $0 : nil
        }
    }
}

/// One authorization-code request (OIDC, PKCE S256): the URL the device opens over the cellular
/// path, and the `state`, `nonce` and code verifier that belong to it. Its URL carries the
/// state and the challenge: log it masked (`redactedURL`), never whole.
public struct AuthorizationRequest: Sendable {
    /// The authorize URL with every parameter.
    public let url: String
    public let redirectURI: String
    public let state: String
    public let nonce: String
    /// The PKCE code verifier (RFC 7636), sent with the code to the token endpoint.
    let codeVerifier: String

    /// A request to `authorizationEndpoint` for `scopes` (`openid` is added first) with a fresh
    /// state, nonce and PKCE verifier; `loginHint` is an E.164 number, sent as `tel:+…`.
    init(authorizationEndpoint: String, clientID: String, redirectURI: String, scopes: [String], loginHint: String?) {
        state = RandomBytes.hex(16)
        nonce = RandomBytes.hex(16)
        codeVerifier = RandomBytes.hex(32)
        self.redirectURI = redirectURI
        let challenge = Base64URL.encode(Digest.sha256(Array(codeVerifier.utf8)))
        var items = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI),
            ("scope", (["openid"] + scopes.filter { $0 != "openid" }).joined(separator: " ")),
            ("state", state), ("nonce", nonce), ("code_challenge", challenge), ("code_challenge_method", "S256")
        ]
        if let loginHint { items.append(("login_hint", "tel:" + loginHint)) }
        url = authorizationEndpoint + (authorizationEndpoint.contains("?") ? "&" : "?") + FormEncoding.encode(items)
    }

    /// The authorization code of the redirect the device leg stopped at (`location`, the
    /// redirect URI with its query): throws `stateMismatch` for another or no state,
    /// `authorizationRefused` for an `error`.
    func code(from location: String) throws(CAMARAError) -> String {
        let items = Credentials.queryItems(of: location)
        func value(_ name: String) -> String? { items.last { $0.name == name }?.value }
        return try code(
            state: value("state"), code: value("code"), error: value("error"),
            errorDescription: value("error_description"))
    }

    /// The authorization code of a redirect URI's query values (`state`, `code`, `error`,
    /// `error_description`): throws `stateMismatch` for another or no state,
    /// `authorizationRefused` for an `error`.
    public func code(
        state returned: String?, code: String?, error: String?, errorDescription: String?
    ) throws(CAMARAError) -> String {
        if let returned, returned != state { throw .stateMismatch }
        if let error { throw .authorizationRefused(error: error, description: errorDescription) }
        guard returned != nil else { throw .stateMismatch }
        guard let code, !code.isEmpty else {
            throw .malformedAnswer(status: 302, reason: "a redirect to the redirect URI without a code")
        }
        return code
    }
}
