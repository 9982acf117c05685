import CellpathCore
import CellularHTTP
import SystemSupport
import Workflow

/// Sends one request and reads its answer: `HTTPClient` over the default network, or a
/// stand-in in tests.
protocol CAMARATransport: Sendable {
    func send(_ request: HTTPClientRequest) async throws(FetchFailure) -> HTTPClientResponse
    /// Starts looking `url`'s host up for a request to come (`HTTPClient.resolveAhead`).
    func resolveAhead(_ url: String)
}

extension HTTPClient: CAMARATransport {}

/// An operator's CAMARA APIs and its OpenID provider, called by one client over the default
/// network: discovery (read once), the token endpoint (authorization code with PKCE, or client
/// credentials cached per scope set until under 60 s of validity), and the API calls with their
/// `{status, code, message}` errors; transient failures (429, 5xx but 501, timeouts, resets)
/// retried by `RetryPolicy`. The device leg is not its part: `CAMARANumberVerification`.
public actor CAMARAClient {
    public nonisolated let endpoint: CAMARAEndpoint
    private let transport: any CAMARATransport
    private let retry: RetryPolicy
    private let now: @Sendable () -> Double
    private let pause: @Sendable (Duration) async -> Void
    private var metadata: ProviderMetadata?
    private var clientTokens: [String: CachedToken] = [:]

    /// Seconds of validity under which a client-credentials token is fetched again.
    static let refreshMargin = 60.0

    public init(endpoint: CAMARAEndpoint, http: HTTPClient, retry: RetryPolicy = .default) {
        self.init(endpoint: endpoint, transport: http, retry: retry)
    }

    init(
        endpoint: CAMARAEndpoint, transport: any CAMARATransport, retry: RetryPolicy = .default,
        now: @escaping @Sendable () -> Double = { WallClock.now },
        pause: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
    ) {
        self.endpoint = endpoint
        self.transport = transport
        self.retry = retry
        self.now = now
        self.pause = pause
    }

    // MARK: OpenID provider

    /// The provider's endpoints: the endpoint's own, else from
    /// `{issuer}/.well-known/openid-configuration`, read once.
    public func providerMetadata() async throws(CAMARAError) -> ProviderMetadata {
        if let metadata = metadata ?? endpoint.metadata { return metadata }
        let response = try await send("GET", endpoint.issuer + "/.well-known/openid-configuration")
        guard let json = Self.json(response), let read = ProviderMetadata(json: json, issuer: endpoint.issuer) else {
            throw .malformedAnswer(
                status: response.status, reason: "a discovery document without this issuer and its endpoints")
        }
        metadata = read
        return read
    }

    /// Starts looking the token endpoint's host up for the code exchange that follows the device
    /// leg, when its metadata is known (no discovery request went to the provider before, whose
    /// lookup and connection the exchange would reuse). Sends nothing to the provider.
    public nonisolated func resolveTokenEndpointAhead() {
        guard let known = endpoint.metadata else { return }
        transport.resolveAhead(known.tokenEndpoint)
    }

    /// A fresh authorization-code request for `scopes` ending at `redirectURI`.
    public func authorizationRequest(
        scopes: [String], redirectURI: String, loginHint: String?
    ) async throws(CAMARAError) -> AuthorizationRequest {
        if let loginHint { try Self.requirePhoneNumber(loginHint) }
        return AuthorizationRequest(
            authorizationEndpoint: try await providerMetadata().authorizationEndpoint, clientID: endpoint.clientID,
            redirectURI: redirectURI, scopes: scopes, loginHint: loginHint)
    }

    /// Exchanges the `code` the device leg of `request` ended with for an access token.
    public func accessToken(code: String, of request: AuthorizationRequest) async throws(CAMARAError) -> String {
        try await requestToken([
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", request.redirectURI),
            ("code_verifier", request.codeVerifier)
        ]).accessToken
    }

    /// A client-credentials (2-legged) token for `scopes`, held while valid.
    public func accessToken(scopes: [String]) async throws(CAMARAError) -> String {
        let key = Set(scopes).sorted().joined(separator: " ")
        if let held = clientTokens[key], held.expiresAt - now() > Self.refreshMargin { return held.accessToken }
        let token = try await requestToken([("grant_type", "client_credentials"), ("scope", key)])
        clientTokens[key] = token
        return token.accessToken
    }

    /// Forgets the client-credentials token of `scopes` (refused with 401).
    private func discardToken(scopes: [String]) {
        clientTokens[Set(scopes).sorted().joined(separator: " ")] = nil
    }

    /// Most token requests of one CIBA authentication while it is pending, and the longest wait between them.
    static let cibaPolls = 5
    static let cibaLongestInterval = 5

    /// A token by CIBA (OpenID Connect Client-Initiated Backchannel Authentication, poll mode):
    /// the backchannel request for `loginHint` (E.164) and `scopes`, then the token endpoint
    /// with its `auth_req_id`, again after its `interval` (at most 5 s) while it is pending.
    public func cibaToken(loginHint: String, scopes: [String]) async throws(CAMARAError) -> String {
        try Self.requirePhoneNumber(loginHint)
        guard let endpoint = try await providerMetadata().backchannelAuthenticationEndpoint else {
            throw .invalidRequest("the operator offers no backchannel authentication (CIBA)")
        }
        let json = try await clientPost(
            endpoint, [("login_hint", loginHint), ("scope", scopes.joined(separator: " "))])
        guard let requestID = json[string: "auth_req_id"], !requestID.isEmpty else {
            throw .malformedAnswer(status: 200, reason: "no auth_req_id in the backchannel answer")
        }
        let interval = min(max(json["interval"]?.intValue ?? 2, 1), Self.cibaLongestInterval)
        var poll = 1
        while true {
            do throws(CAMARAError) {
                return try await requestToken([
                    ("grant_type", "urn:openid:params:grant-type:ciba"), ("auth_req_id", requestID)
                ]).accessToken
            } catch .api(400, let code?, let message) where ["authorization_pending", "slow_down"].contains(code) {
                guard poll < Self.cibaPolls, !Task.isCancelled else {
                    throw .api(status: 400, code: code, message: message)
                }
                poll += 1
                await pause(.seconds(interval))
            }
        }
    }

    /// `POST` to the token endpoint with `grant` and the client's authentication (a fresh
    /// assertion for each attempt: a `jti` is used once).
    private func requestToken(_ grant: [(String, String)]) async throws(CAMARAError) -> CachedToken {
        let json = try await clientPost(try await providerMetadata().tokenEndpoint, grant)
        guard let token = json[string: "access_token"], !token.isEmpty else {
            throw .malformedAnswer(status: 200, reason: "no access_token in the token answer")
        }
        return CachedToken(accessToken: token, expiresAt: now() + Double(json["expires_in"]?.intValue ?? 300))
    }

    /// `POST`s the form `fields` with the client's authentication to one of the OpenID
    /// provider's endpoints (the assertion's `aud`); returns the JSON answer.
    private func clientPost(_ url: String, _ fields: [(String, String)]) async throws(CAMARAError) -> JSONValue {
        let tokenEndpoint = try await providerMetadata().tokenEndpoint
        let response = try await send("POST", url) { () throws(CAMARAError) in
            let (credentials, headers) = try self.endpoint.authentication.credentials(
                clientID: self.endpoint.clientID, tokenEndpoint: tokenEndpoint, now: self.now())
            return (
                headers + [("Content-Type", "application/x-www-form-urlencoded")],
                Array(FormEncoding.encode(fields + credentials).utf8)
            )
        }
        guard response.status < 400 else { throw CAMARAError(response) }
        guard let json = Self.json(response) else {
            throw .malformedAnswer(status: response.status, reason: "a body that is not JSON")
        }
        return json
    }

    // MARK: APIs

    /// Calls `{apiRoot}{path}` with a client-credentials token for `scopes`, fetched again once
    /// when the API refuses it with 401; returns the JSON answer.
    func call(
        _ method: String, _ path: String, scopes: [String], body: JSONValue? = nil
    ) async throws(CAMARAError) -> JSONValue {
        var refreshed = false
        while true {
            let token = try await accessToken(scopes: scopes)
            do throws(CAMARAError) {
                return try await call(method, path, token: token, body: body)
            } catch .api(401, let code, let message) {
                guard !refreshed else { throw .api(status: 401, code: code, message: message) }
                refreshed = true
                discardToken(scopes: scopes)
            }
        }
    }

    /// Calls `{apiRoot}{path}` with `token`; returns the JSON answer.
    func call(
        _ method: String, _ path: String, token: String, body: JSONValue? = nil
    ) async throws(CAMARAError)
        -> JSONValue
    {
        var headers = [("Authorization", "Bearer \(token)"), ("Accept", "application/json")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let bytes = body.map { Array($0.serialized.utf8) }
        let response = try await send(method, endpoint.apiRoot + path) { (headers, bytes) }
        guard response.status < 400 else { throw CAMARAError(response) }
        guard let json = Self.json(response) else {
            throw .malformedAnswer(status: response.status, reason: "a body that is not JSON")
        }
        return json
    }

    /// Sends `method` to `url` with the headers and body `content` makes (anew for each attempt),
    /// again after a backoff while the failure is transient and attempts remain. Returns the last
    /// answer, error statuses included; throws only when no answer came.
    private func send(
        _ method: String, _ url: String,
        content: () throws(CAMARAError) -> (headers: [(String, String)], body: [UInt8]?) = { ([], nil) }
    ) async throws(CAMARAError) -> HTTPClientResponse {
        var attempt = 1
        while true {
            let (headers, body) = try content()
            let request = HTTPClientRequest(
                url: url, method: method, headers: headers.map { HTTPHeader($0.0, $0.1) }, body: body,
                timeout: endpoint.timeout, caFile: endpoint.caFile)
            do throws(FetchFailure) {
                let answer = try await transport.send(request)
                let transient = answer.status == 429 || (answer.status >= 500 && answer.status != 501)
                guard answer.status >= 400, !Task.isCancelled,
                    let delay = retry.delay(transient: transient, retryAfter: Self.retryAfter(answer), attempt: attempt)
                else { return answer }
                await pause(delay)
            } catch {
                guard !Task.isCancelled,
                    let delay = retry.delay(
                        transient: error.reason.kind == .temporary, retryAfter: nil, attempt: attempt)
                else { throw .transport(error) }
                await pause(delay)
            }
            attempt += 1
        }
    }

    /// The `Retry-After` delay of `answer` when it is a number of seconds.
    private static func retryAfter(_ answer: HTTPClientResponse) -> Duration? {
        answer.header("retry-after").flatMap { Int($0) }.map { .seconds(max(0, $0)) }
    }

    private static func json(_ response: HTTPClientResponse) -> JSONValue? {
        response.bodyTruncated ? nil : JSONValue.parse(response.body)
    }

    /// Throws `invalidRequest` unless `number` is E.164 as CAMARA writes it (`^\+[1-9][0-9]{4,14}$`);
    /// the message does not repeat the number.
    static func requirePhoneNumber(_ number: String) throws(CAMARAError) {
        let digits = number.utf8.dropFirst()
        guard number.hasPrefix("+"), (5 ... 15).contains(digits.count), digits.first != UInt8(ascii: "0"),
            digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else {
            throw .invalidRequest("the phone number must be E.164 with a leading + (5 to 15 digits)")
        }
    }
}
