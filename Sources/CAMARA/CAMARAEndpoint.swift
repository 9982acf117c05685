import CellpathCore
import CellpathCrypto
import SystemSupport
import Workflow

/// How the client proves who it is to the token endpoint.
public enum ClientAuthentication: Sendable {
    /// `private_key_jwt`: a JWT signed with the client's key (RS256 or ES256), `kid` optional.
    case privateKeyJWT(JWSKey, keyID: String?)
    /// `client_secret_basic`: HTTP Basic with the client id and secret.
    case clientSecretBasic(secret: String)
    /// Vonage's network APIs: the application's JWT (or key and secret) in `Authorization`.
    case vonageApplication(VonageAuthentication)

    /// What to check when the operator refuses these credentials: the profile's settings.
    public var credentialsHint: String {
        switch self {
        case .vonageApplication:
            "check the Vonage application (vonage.application_id, vonage.private_key) and that its network APIs are enabled"
        case .privateKeyJWT, .clientSecretBasic:
            "check the client id, its key and its scopes (camara.client_id, camara.key_file)"
        }
    }

    /// The assertion's type (RFC 7523).
    public static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// Seconds an assertion is valid.
    static let assertionLifetime = 300

    /// The form fields and headers that authenticate `clientID` at `tokenEndpoint` (the
    /// assertion's `aud`), at `now` (seconds since 1970).
    func credentials(
        clientID: String, tokenEndpoint: String, now: Double
    ) throws(CAMARAError) -> (fields: [(String, String)], headers: [(String, String)]) {
        switch self {
        case .privateKeyJWT(let key, let keyID):
            let issued = Int(now)
            let claims = JSONValue.object([
                ("iss", .string(clientID)), ("sub", .string(clientID)), ("aud", .string(tokenEndpoint)),
                ("jti", .string(RandomBytes.hex(16))), ("iat", .int(issued)),
                ("exp", .int(issued + Self.assertionLifetime))
            ])
            guard let assertion = CompactJWT.sign(claims: claims, with: key, keyID: keyID) else {
                throw .invalidRequest("the client key cannot sign (is it a private key?)")
            }
            return (
                [
                    ("client_id", clientID), ("client_assertion_type", Self.assertionType),
                    ("client_assertion", assertion)
                ],
                []
            )
        case .clientSecretBasic(let secret):
            // RFC 6749 2.3.1: both parts form-encoded before Base64.
            let pair = FormEncoding.percentEncode(clientID) + ":" + FormEncoding.percentEncode(secret)
            return ([], [("Authorization", "Basic " + Base64.encode(pair.utf8))])
        case .vonageApplication(let authentication):
            let header = authentication.header()
            return ([], [(header.name, header.value)])
        }
    }
}

/// An operator's CAMARA APIs and its OpenID Connect authorization server, and this client.
public struct CAMARAEndpoint: Sendable {
    /// `{apiRoot}` of the API paths (`{apiRoot}/number-verification/v2/verify`), no trailing `/`.
    public var apiRoot: String
    /// The OpenID provider's issuer: discovery reads `{issuer}/.well-known/openid-configuration`.
    public var issuer: String
    public var clientID: String
    public var authentication: ClientAuthentication
    /// Extra CA bundle (PEM) trusted besides the system store.
    public var caFile: String?
    /// Budget of one call.
    public var timeout: Duration
    /// The OpenID provider's endpoints when it publishes no discovery document (Vonage's).
    public var metadata: ProviderMetadata?

    public init(
        apiRoot: String, issuer: String, clientID: String, authentication: ClientAuthentication,
        caFile: String? = nil, timeout: Duration = .seconds(10), metadata: ProviderMetadata? = nil
    ) {
        self.apiRoot = Self.trimmed(apiRoot)
        self.issuer = Self.trimmed(issuer)
        self.clientID = clientID
        self.authentication = authentication
        self.caFile = caFile
        self.timeout = timeout
        self.metadata = metadata
    }

    private static func trimmed(_ url: String) -> String {
        var url = url
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}
