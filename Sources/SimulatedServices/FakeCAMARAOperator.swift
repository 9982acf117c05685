import CellpathCore
import CellpathCrypto
import HTTPServer
import SimulatorScenario
import Synchronization
import SystemSupport

/// A client registered with the fake operator: its id, the public key of its `private_key_jwt`
/// assertions (or a secret for `client_secret_basic`) and its redirect URIs.
public struct RegisteredCAMARAClient: Sendable {
    public var clientID: String
    public var publicKey: JWSKey?
    public var secret: String?
    public var redirectURIs: [String]

    public init(clientID: String, publicKey: JWSKey? = nil, secret: String? = nil, redirectURIs: [String]) {
        self.clientID = clientID
        self.publicKey = publicKey
        self.secret = secret
        self.redirectURIs = redirectURIs
    }
}

/// Where an operator's endpoints are and how its clients authenticate: CAMARA's own layout, or
/// Vonage's Number Verification (authorize at `/oauth2/auth`, the API under
/// `/camara/number-verification/v031`, a purpose scope for the operation, the application's JWT
/// as the client's authentication at the token endpoint).
public struct CAMARAOperatorDialect: Sendable {
    public var authorizePath: String
    /// The root of Number Verification's paths (`/verify`, `/device-phone-number`).
    public var numberVerificationRoot: String
    /// Purpose scopes that stand for an operation's scope.
    public var purposeScopes: [String: String]
    /// Whether a client may authenticate with its application JWT (`Authorization: Bearer`,
    /// `application_id` = client id, RS256 by its key).
    public var acceptsApplicationJWT: Bool
    /// The root of SIM Swap's paths (`/check`, `/retrieve-date`).
    public var simSwapRoot: String
    /// CIBA's backchannel authentication path, when offered: the subscriber is the `login_hint`'s.
    public var backchannelPath: String?
    /// Whether SIM Swap takes `phoneNumber` with a token that names the subscriber (it must be
    /// the same): Vonage's v0.4.0; CAMARA v2 refuses it (`UNNECESSARY_IDENTIFIER`).
    public var numberWithSubscriberToken: Bool

    public static let camara = CAMARAOperatorDialect(
        authorizePath: "/oauth2/authorize", numberVerificationRoot: "/number-verification/v2", purposeScopes: [:],
        acceptsApplicationJWT: false, simSwapRoot: "/sim-swap/v2", backchannelPath: nil,
        numberWithSubscriberToken: false)
    public static let vonage = CAMARAOperatorDialect(
        authorizePath: "/oauth2/auth", numberVerificationRoot: "/camara/number-verification/v031",
        purposeScopes: [
            "dpv:FraudPreventionAndDetection#number-verification-verify-read": "number-verification:verify",
            "dpv:FraudPreventionAndDetection#check-sim-swap": "sim-swap:check",
            "dpv:FraudPreventionAndDetection#retrieve-sim-swap-date": "sim-swap:retrieve-date"
        ],
        acceptsApplicationJWT: true, simSwapRoot: "/camara/sim-swap/v040", backchannelPath: "/oauth2/bc-authorize",
        numberWithSubscriberToken: true)
}

/// A mobile operator's CAMARA APIs and its OpenID provider in one endpoint (issuer = `baseURL`,
/// API root = `baseURL`): discovery, authorize with network-based authentication (the device is
/// the subscriber whose bearer holds the request's SOURCE ADDRESS; any other source gets
/// `error=access_denied`), the token endpoint (authorization code with PKCE S256, client
/// credentials; clients authenticate with `private_key_jwt` or `client_secret_basic`), Number
/// Verification v2 and SIM Swap v2 (from the scenario's `simChangedMinutesAgo`). It also serves
/// `callbackPath`, the test client's redirect URI, and counts requests to it: a device leg must
/// never make one. Safe to call from any thread.
public final class FakeCAMARAOperator: SimulatedHTTPEndpoint {
    /// The scopes the operator grants, by the grant that may carry them.
    public static let threeLeggedScopes: Set<String> = [
        "openid", "number-verification:verify", "number-verification:device-phone-number:read",
        "sim-swap", "sim-swap:check", "sim-swap:retrieve-date"
    ]
    public static let clientCredentialsScopes: Set<String> = ["sim-swap", "sim-swap:check", "sim-swap:retrieve-date"]
    /// The path of the test client's redirect URI on this endpoint.
    public static let callbackPath = "/client/callback"
    /// Days the operator keeps SIM changes (retrieve-date's `monitoredPeriod` when it knows of none).
    public static let monitoredDays = 120
    /// Seconds a code and an access token live.
    static let codeLifetime = 60.0
    static let tokenLifetime = 300

    public let baseURL: String
    public let dialect: CAMARAOperatorDialect
    /// The scenario's faults of this operator.
    public let faults: OIDCFaults
    let clients: [String: RegisteredCAMARAClient]
    let directory: any SubscriberDirectory
    let clock: SimulatorClock
    let state = Mutex(OperatorState())

    /// What the operator remembers: codes until used, tokens, assertion ids already seen.
    struct OperatorState {
        var codes: [String: Grant] = [:]
        /// CIBA's authentication requests until their token is fetched, by `auth_req_id`.
        var backchannelRequests: [String: Grant] = [:]
        var tokens: [String: Grant] = [:]
        var seenAssertions: Set<String> = []
        var callbackRequests = 0
    }

    /// What a code or a token stands for.
    struct Grant {
        var clientID: String
        var scopes: Set<String>
        /// The authenticated subscriber's number (3-legged); nil for client credentials.
        var msisdn: String?
        var expiresAt: Double
        var redirectURI: String = ""
        var codeChallenge: String = ""
    }

    public init(
        baseURL: String, dialect: CAMARAOperatorDialect = .camara, faults: OIDCFaults = OIDCFaults(),
        clients: [RegisteredCAMARAClient], directory: any SubscriberDirectory, clock: SimulatorClock = .system
    ) {
        self.baseURL = baseURL
        self.dialect = dialect
        self.faults = faults
        self.clients = Dictionary(clients.map { ($0.clientID, $0) }, uniquingKeysWith: { first, _ in first })
        self.directory = directory
        self.clock = clock
    }

    /// Requests that reached the test client's redirect URI (`callbackPath`).
    public var callbackRequests: Int { state.withLock { $0.callbackRequests } }
    public var tokenEndpoint: String { baseURL + "/oauth2/token" }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let numberVerification = dialect.numberVerificationRoot
        switch (request.method, request.path) {
        case ("GET", "/.well-known/openid-configuration"): return discovery()
        case ("GET", dialect.authorizePath): return authorize(request)
        case ("POST", "/oauth2/token"): return token(request)
        case ("POST", numberVerification + "/verify"): return verify(request)
        case ("GET", numberVerification + "/device-phone-number"): return devicePhoneNumber(request)
        case ("POST", dialect.simSwapRoot + "/check"): return simSwapCheck(request)
        case ("POST", dialect.simSwapRoot + "/retrieve-date"): return simSwapDate(request)
        case ("POST", dialect.backchannelPath ?? "/"): return backchannelAuthentication(request)
        case (_, Self.callbackPath):
            state.withLock { $0.callbackRequests += 1 }
            return HTTPResponse(status: 200, contentType: "text/plain", body: "the client's redirect URI\n")
        default: return Self.error(404, "NOT_FOUND", "The requested resource is not found")
        }
    }

    // MARK: OpenID provider

    private func discovery() -> HTTPResponse {
        .json(
            200,
            .object([
                ("issuer", .string(baseURL)), ("authorization_endpoint", .string(baseURL + dialect.authorizePath)),
                ("token_endpoint", .string(tokenEndpoint)),
                ("response_types_supported", .array([.string("code")])),
                ("grant_types_supported", .array([.string("authorization_code"), .string("client_credentials")])),
                ("subject_types_supported", .array([.string("public")])),
                ("id_token_signing_alg_values_supported", .array([.string("RS256")])),
                ("code_challenge_methods_supported", .array([.string("S256")])),
                (
                    "token_endpoint_auth_methods_supported",
                    .array([.string("private_key_jwt"), .string("client_secret_basic")])
                ),
                ("token_endpoint_auth_signing_alg_values_supported", .array([.string("RS256"), .string("ES256")])),
                ("scopes_supported", .array(Self.threeLeggedScopes.sorted().map(JSONValue.string)))
            ]))
    }

    /// `GET /oauth2/authorize`: an unknown client or redirect URI is a 400 page (never a redirect);
    /// other errors and the code go to the redirect URI with the request's `state`.
    private func authorize(_ request: HTTPRequest) -> HTTPResponse {
        guard let clientID = request.query("client_id"), let client = clients[clientID],
            let redirectURI = request.query("redirect_uri"), client.redirectURIs.contains(redirectURI)
        else {
            return HTTPResponse(
                status: 400, contentType: "text/plain", body: "unknown client_id or unregistered redirect_uri\n")
        }
        // The scenario's faults: another state, none, another target than the redirect URI.
        let state = faults.missingState ? nil : faults.wrongState ? RandomBytes.hex(16) : request.query("state")
        let target = faults.redirectElsewhere ? redirectURI + "-elsewhere" : redirectURI
        func back(_ items: [(String, String)]) -> HTTPResponse {
            .redirect(WebEncoding.appending(items + (state.map { [("state", $0)] } ?? []), to: target))
        }
        func refuse(_ error: String, _ description: String) -> HTTPResponse {
            back([("error", error), ("error_description", description)])
        }
        guard request.query("response_type") == "code" else {
            return refuse("unsupported_response_type", "response_type must be code")
        }
        let scopes = Set((request.query("scope") ?? "").split(separator: " ").map(String.init))
        guard scopes.contains("openid") else { return refuse("invalid_scope", "scope must include openid") }
        let requested = Set(scopes.compactMap { dialect.purposeScopes[$0] ?? ($0.hasPrefix("dpv:") ? nil : $0) })
        guard requested.isSubset(of: Self.threeLeggedScopes) else {
            return refuse("invalid_scope", "a requested scope is not offered")
        }
        guard request.query("code_challenge_method") == "S256", let challenge = request.query("code_challenge"),
            challenge.count == 43
        else { return refuse("invalid_request", "PKCE with S256 is required") }
        if let hint = request.query("login_hint"), !hint.hasPrefix("tel:+") {
            return refuse("invalid_request", "login_hint must be tel:+E164")
        }
        if let error = faults.authorizationError {
            return refuse(error.rawValue, "the scenario's authorizationError")
        }
        // Network-based authentication: the operator knows which subscriber holds the address.
        guard let sim = directory.subscriber(holding: request.remoteAddress) else {
            return refuse("access_denied", "the device is not on this operator's mobile network")
        }
        let code = RandomBytes.hex(16)
        let grant = Grant(
            clientID: clientID, scopes: requested, msisdn: sim.msisdn,
            expiresAt: clock.now() + (faults.codeExpired ? -1 : Self.codeLifetime),
            redirectURI: redirectURI,
            codeChallenge: challenge)
        self.state.withLock { $0.codes[code] = grant }
        return back([("code", code)])
    }

    /// `POST /oauth2/token`.
    private func token(_ request: HTTPRequest) -> HTTPResponse {
        guard request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true,
            let form = WebEncoding.formFields(request.body)
        else { return Self.oauthError(400, "invalid_request", "the body must be a form") }
        guard let clientID = authenticatedClient(request, form) else {
            return Self.oauthError(401, "invalid_client", "client authentication failed")
        }
        let now = clock.now()
        let grant: Grant
        switch form["grant_type"] {
        case "authorization_code":
            guard let code = form["code"], let issued = state.withLock({ $0.codes.removeValue(forKey: code) }),
                issued.clientID == clientID, issued.expiresAt > now, issued.redirectURI == form["redirect_uri"],
                let verifier = form["code_verifier"],
                Base64URL.encode(Digest.sha256(Array(verifier.utf8))) == issued.codeChallenge
            else { return Self.oauthError(400, "invalid_grant", "the code, redirect_uri or code_verifier is wrong") }
            grant = Grant(
                clientID: clientID, scopes: issued.scopes, msisdn: issued.msisdn,
                expiresAt: now + Double(Self.tokenLifetime))
        case "urn:openid:params:grant-type:ciba":
            if let error = faults.backchannelError {
                return Self.oauthError(400, error.rawValue, "the scenario's backchannelError")
            }
            guard let id = form["auth_req_id"],
                let issued = state.withLock({ $0.backchannelRequests.removeValue(forKey: id) }),
                issued.clientID == clientID, issued.expiresAt > now
            else { return Self.oauthError(400, "invalid_grant", "the auth_req_id is unknown, used or expired") }
            grant = Grant(
                clientID: clientID, scopes: issued.scopes, msisdn: issued.msisdn,
                expiresAt: now + Double(Self.tokenLifetime))
        case "client_credentials":
            let scopes = Set((form["scope"] ?? "").split(separator: " ").map(String.init))
            guard !scopes.isEmpty, scopes.isSubset(of: Self.clientCredentialsScopes) else {
                return Self.oauthError(400, "invalid_scope", "a requested scope is not offered to this grant")
            }
            grant = Grant(
                clientID: clientID, scopes: scopes, msisdn: nil,
                expiresAt: now + Double(Self.tokenLifetime))
        default:
            return Self.oauthError(400, "unsupported_grant_type", "grant_type is not supported")
        }
        let token = RandomBytes.hex(32)
        state.withLock { $0.tokens[token] = grant }
        return .json(
            200,
            .object([
                ("access_token", .string(token)), ("token_type", .string("Bearer")),
                ("expires_in", .int(Self.tokenLifetime)),
                ("scope", .string(grant.scopes.sorted().joined(separator: " ")))
            ]),
            headers: ["Cache-Control": "no-store"])
    }

    /// CIBA's backchannel authentication (poll mode): the subscriber of `login_hint` (E.164, or
    /// `tel:` E.164) authenticated at once, as an operator does for a number it serves; an
    /// unknown number is `unknown_user_id`.
    private func backchannelAuthentication(_ request: HTTPRequest) -> HTTPResponse {
        guard let form = WebEncoding.formFields(request.body) else {
            return Self.oauthError(400, "invalid_request", "the body must be a form")
        }
        guard let clientID = authenticatedClient(request, form) else {
            return Self.oauthError(401, "invalid_client", "client authentication failed")
        }
        let scopes = Set((form["scope"] ?? "").split(separator: " ").compactMap { dialect.purposeScopes[String($0)] })
        guard !scopes.isEmpty else { return Self.oauthError(400, "invalid_scope", "no purpose scope that is offered") }
        let hint = form["login_hint"].map { $0.hasPrefix("tel:") ? String($0.dropFirst(4)) : $0 } ?? ""
        guard let sim = directory.subscriber(msisdn: hint) else {
            return Self.oauthError(400, "unknown_user_id", "the login_hint is not a subscriber of this operator")
        }
        let id = RandomBytes.hex(16)
        let grant = Grant(
            clientID: clientID, scopes: scopes, msisdn: sim.msisdn,
            expiresAt: clock.now() + Self.codeLifetime)
        state.withLock { $0.backchannelRequests[id] = grant }
        return .json(
            200,
            .object([
                ("auth_req_id", .string(id)), ("expires_in", .int(Int(Self.codeLifetime))), ("interval", .int(1))
            ]))
    }

    /// The client the request authenticates: a `private_key_jwt` assertion (signed by the
    /// client's key, `iss` = `sub` = client id, `aud` the token endpoint or the issuer, unexpired,
    /// its `jti` never seen before), `client_secret_basic`, or (Vonage) the application's JWT.
    private func authenticatedClient(_ request: HTTPRequest, _ form: [String: String]) -> String? {
        if dialect.acceptsApplicationJWT, let header = request.headers["Authorization"], header.hasPrefix("Bearer ") {
            let token = String(header.dropFirst("Bearer ".count))
            guard let claimed = Self.unverifiedClaims(token)?[string: "application_id"],
                let key = clients[claimed]?.publicKey, let claims = CompactJWT.verifiedClaims(of: token, with: key),
                let expires = claims["exp"]?.intValue, Double(expires) > clock.now()
            else { return nil }
            return claimed
        }
        if let assertion = form["client_assertion"] {
            guard form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                let claimed = Self.unverifiedClaims(assertion)?[string: "iss"], let key = clients[claimed]?.publicKey,
                let claims = CompactJWT.verifiedClaims(of: assertion, with: key),
                claims[string: "sub"] == claimed, form["client_id"].map({ $0 == claimed }) ?? true,
                [tokenEndpoint, baseURL].contains(claims[string: "aud"] ?? ""),
                let expires = claims["exp"]?.intValue, Double(expires) > clock.now(),
                let jti = claims[string: "jti"], state.withLock({ $0.seenAssertions.insert(jti).inserted })
            else { return nil }
            return claimed
        }
        guard let (id, secret) = WebEncoding.basicCredentials(request.headers["Authorization"]),
            let id = WebEncoding.percentDecode(id), let secret = WebEncoding.percentDecode(secret),
            let expected = clients[id]?.secret, expected == secret
        else { return nil }
        return id
    }

    /// The claims of a compact JWT, read before its signature is checked (to find the key).
    private static func unverifiedClaims(_ token: String) -> JSONValue? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        return Base64URL.decode(String(parts[1])).flatMap(JSONValue.parse)
    }

    // MARK: Answers

    /// The grant of the request's Bearer token when it holds one of `scopes`; else the 401 or
    /// 403 answer.
    func grant(_ request: HTTPRequest, anyOf scopes: Set<String>) -> Result<Grant, Refusal> {
        guard let header = request.headers["Authorization"], header.lowercased().hasPrefix("bearer "),
            let grant = state.withLock({ $0.tokens[String(header.dropFirst("bearer ".count)).trimmedSpaces] }),
            grant.expiresAt > clock.now()
        else {
            return .failure(
                Refusal(
                    Self.error(
                        401, "UNAUTHENTICATED",
                        "Request not authenticated due to missing, invalid, or expired credentials.")))
        }
        guard !grant.scopes.isDisjoint(with: scopes) else {
            return .failure(
                Refusal(
                    Self.error(
                        403, "PERMISSION_DENIED", "Client does not have sufficient permissions to perform this action.")
                ))
        }
        return .success(grant)
    }

    /// An error answer where a result was expected.
    struct Refusal: Error {
        var response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }
    }

    /// A CAMARA error: `{status, code, message}`.
    static func error(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
        .json(status, .object([("status", .int(status)), ("code", .string(code)), ("message", .string(message))]))
    }

    /// An OAuth error of the token endpoint: `{error, error_description}`.
    static func oauthError(_ status: Int, _ error: String, _ description: String) -> HTTPResponse {
        .json(
            status, .object([("error", .string(error)), ("error_description", .string(description))]),
            headers: ["Cache-Control": "no-store"])
    }

    /// The JSON object of a request body; nil when it is not one.
    static func jsonObject(_ request: HTTPRequest) -> JSONValue? {
        guard let json = JSONValue.parse(request.body), case .object = json else { return nil }
        return json
    }
}
