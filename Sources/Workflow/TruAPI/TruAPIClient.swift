import CellpathCore
import CellularHTTP
import Synchronization
import SystemSupport

/// Sends one request to the API and reads its answer: `HTTPClient` over the default network,
/// or a stand-in in tests.
protocol TruAPITransport: Sendable {
    func send(_ request: HTTPClientRequest) async throws(FetchFailure) -> HTTPClientResponse
}

extension HTTPClient: TruAPITransport {}

/// The tru.ID REST API, called with the project's credentials: an OAuth2 client-credentials
/// token per scope set (cached, refreshed under 60 s of validity, fetched once however many
/// calls wait for it, fetched again once when a call is refused with 401), transient failures
/// retried by `RetryPolicy`, every call bounded by `timeout`.
public actor TruAPIClient {
    public nonisolated let endpoint: TruAPIEndpoint
    private let transport: any TruAPITransport
    private let tokenCache: (any TokenCache)?
    private let retry: RetryPolicy
    private let timeout: Duration
    private let now: @Sendable () -> Double
    private let pause: @Sendable (Duration) async -> Void
    private var tokens: [String: TokenSlot] = [:]
    /// Token requests sent to the API so far (each refresh counts once, however many waited).
    public private(set) var tokenRequests = 0

    /// A scope set's token: held, or being fetched for every caller that waits.
    private enum TokenSlot {
        case ready(CachedToken)
        case fetching(Task<Result<CachedToken, TruAPIError>, Never>)
    }

    /// Seconds of validity under which a token is fetched again.
    static let refreshMargin = 60.0

    public init(
        endpoint: TruAPIEndpoint, http: HTTPClient, tokenCache: (any TokenCache)? = nil, retry: RetryPolicy = .default,
        timeout: Duration
    ) {
        self.init(endpoint: endpoint, transport: http, tokenCache: tokenCache, retry: retry, timeout: timeout)
    }

    init(
        endpoint: TruAPIEndpoint, transport: any TruAPITransport, tokenCache: (any TokenCache)? = nil,
        retry: RetryPolicy = .default,
        timeout: Duration, now: @escaping @Sendable () -> Double = { WallClock.now },
        pause: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
    ) {
        self.endpoint = endpoint
        self.transport = transport
        self.tokenCache = tokenCache
        self.retry = retry
        self.timeout = timeout
        self.now = now
        self.pause = pause
    }

    // MARK: Checks

    /// Creates a PhoneCheck or SubscriberCheck for `phoneNumber` (E.164); the device must open
    /// its `checkURL`. SIMCheck has no check_url: use `simCheck`.
    public func createCheck(
        _ product: CheckProduct, version: APIVersion, phoneNumber: String, referenceID: String? = nil,
        redirectURL: String? = nil, period: Int? = nil
    ) async throws(TruAPIError) -> CreatedCheck {
        guard product != .simCheck else {
            throw .invalidRequest("a SIMCheck has no check_url: create it with simCheck")
        }
        var body: [(String, JSONValue)] = [("phone_number", .string(phoneNumber))]
        if let referenceID { body.append(("reference_id", .string(referenceID))) }
        if let redirectURL { body.append(("redirect_url", .string(redirectURL))) }
        if let period { body.append(("period", .int(period))) }
        let response = try await call(
            "POST", "/\(product.rawValue)/\(version.rawValue)/checks", scope: product.scope,
            body: Array(JSONValue.object(body).serialized.utf8), contentType: "application/json")
        guard let created = Self.json(response).flatMap(CreatedCheck.init(json:)) else {
            throw .malformedAnswer(status: response.status, reason: "no check_id and check_url in the created check")
        }
        return created
    }

    /// Completes a v0.2 check with the code its check_url chain ended with (json-patch `add /code`).
    public func completeCheck(
        _ product: CheckProduct, checkID: String, code: String
    ) async throws(TruAPIError) -> CheckResult {
        let patch = JSONValue.array([
            .object([("op", .string("add")), ("path", .string("/code")), ("value", .string(code))])
        ])
        let response = try await call(
            "PATCH", "/\(product.rawValue)/v0.2/checks/\(try Self.segment(checkID, "check_id"))",
            scope: product.scope, body: Array(patch.serialized.utf8), contentType: "application/json-patch+json")
        return try Self.checkResult(response)
    }

    /// The current state of a check (v0.1: its outcome once the device opened check_url).
    public func checkResult(
        _ product: CheckProduct, version: APIVersion, checkID: String
    ) async throws(TruAPIError) -> CheckResult {
        let response = try await call(
            "GET", "/\(product.rawValue)/\(version.rawValue)/checks/\(try Self.segment(checkID, "check_id"))",
            scope: product.scope)
        return try Self.checkResult(response)
    }

    /// Runs a SIMCheck (synchronous): whether the SIM changed within `period` (the API's unit and default).
    public func simCheck(phoneNumber: String, period: Int? = nil) async throws(TruAPIError) -> CheckResult {
        var body: [(String, JSONValue)] = [("phone_number", .string(phoneNumber))]
        if let period { body.append(("period", .int(period))) }
        let response = try await call(
            "POST", "/sim_check/v0.1/checks", scope: CheckProduct.simCheck.scope,
            body: Array(JSONValue.object(body).serialized.utf8), contentType: "application/json")
        return try Self.checkResult(response)
    }

    // MARK: Coverage

    /// Coverage of the mobile network holding `deviceIP` (`/coverage/v0.1/device_ips/{ip}`), or of
    /// the caller's own address when nil (`/coverage/v0.1/device_ip`).
    public func coverage(deviceIP: String?) async throws(TruAPIError) -> APIAnswer {
        let path =
            try deviceIP.map { ip throws(TruAPIError) in
                "/coverage/v0.1/device_ips/\(try Self.segment(ip, "ip_address"))"
            }
            ?? "/coverage/v0.1/device_ip"
        return try answer(try await call("GET", path, scope: "coverage"))
    }

    /// Coverage of a country's networks (`/coverage/v0.1/countries/{code}`).
    public func coverage(countryCode: String) async throws(TruAPIError) -> APIAnswer {
        try answer(
            try await call(
                "GET", "/coverage/v0.1/countries/\(try Self.segment(countryCode, "country_code"))", scope: "coverage"))
    }

    private func answer(_ response: HTTPClientResponse) throws(TruAPIError) -> APIAnswer {
        guard let json = Self.json(response) else {
            throw .malformedAnswer(status: response.status, reason: "a body that is not JSON")
        }
        return APIAnswer(status: response.status, json: json)
    }

    // MARK: Tokens

    /// A valid access token with `scopes` (e.g. `["coverage"]` for a device's coverage call).
    public func accessToken(scopes: [String]) async throws(TruAPIError) -> String {
        try await token(scopes: scopes).accessToken
    }

    /// The scope set's token: held, loaded from the cache, or fetched once for every waiter.
    private func token(scopes: [String]) async throws(TruAPIError) -> CachedToken {
        let key = tokenKey(scopes)
        switch tokens[key] {
        case .ready(let token) where token.expiresAt - now() > Self.refreshMargin:
            return token
        case .fetching(let task):
            return try await Self.awaitUnlessCancelled(task).get()
        default:
            break
        }
        if let cached = tokenCache?.token(for: key), cached.expiresAt - now() > Self.refreshMargin {
            tokens[key] = .ready(cached)
            return cached
        }
        tokenRequests += 1
        // The fetch settles the slot itself: a caller cancelled meanwhile leaves it to the others.
        let task = Task {
            let result = await self.fetchToken(scopes: scopes)
            self.settle(key, with: result)
            return result
        }
        tokens[key] = .fetching(task)
        return try await Self.awaitUnlessCancelled(task).get()
    }

    /// The fetched token held (and cached), or the slot emptied for the next caller to fetch again.
    private func settle(_ key: String, with result: Result<CachedToken, TruAPIError>) {
        guard case .fetching = tokens[key] else { return }
        switch result {
        case .success(let token):
            tokens[key] = .ready(token)
            tokenCache?.store(token, for: key)
        case .failure:
            tokens[key] = nil
        }
    }

    /// `task`'s result, or a cancellation failure as soon as the caller is cancelled: a shared
    /// token request must not hold a cancelled call (serve's stop waits for its handlers).
    private static func awaitUnlessCancelled(
        _ task: Task<Result<CachedToken, TruAPIError>, Never>
    ) async -> Result<CachedToken, TruAPIError> {
        let cancelled = Result<CachedToken, TruAPIError>.failure(.transport(FetchFailure(.cancelled, "cancelled")))
        let waiter = TokenWaiter()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiter.wait(continuation)
                if Task.isCancelled { waiter.resume(cancelled) }
                Task.detached { waiter.resume(await task.value) }
            }
        } onCancel: {
            waiter.resume(cancelled)
        }
    }

    /// Forgets `token` (refused with 401), unless a newer one already replaced it.
    private func discard(_ token: CachedToken, scopes: [String]) {
        let key = tokenKey(scopes)
        if case .ready(let held) = tokens[key], held == token { tokens[key] = nil }
        if tokenCache?.token(for: key) == token { tokenCache?.remove(key) }
    }

    /// Names the API, the client and the scopes (sorted), never the secret.
    private func tokenKey(_ scopes: [String]) -> String {
        "\(endpoint.trimmedBaseURL) \(endpoint.clientID) \(Set(scopes).sorted().joined(separator: " "))"
    }

    /// `POST /oauth2/v1/token` with Basic client credentials.
    private func fetchToken(scopes: [String]) async -> Result<CachedToken, TruAPIError> {
        let basic = Base64.encode("\(endpoint.clientID):\(endpoint.clientSecret)".utf8)
        let scope = scopes.joined(separator: "%20")
        let request = HTTPClientRequest(
            url: endpoint.trimmedBaseURL + "/oauth2/v1/token", method: "POST",
            headers: [
                HTTPHeader("Authorization", "Basic \(basic)"),
                HTTPHeader("Content-Type", "application/x-www-form-urlencoded"),
                HTTPHeader("Accept", "application/json")
            ],
            body: Array("grant_type=client_credentials&scope=\(scope)".utf8),
            timeout: timeout, caFile: endpoint.caFile)
        do throws(TruAPIError) {
            let response = try await sendRetrying(request)
            guard response.status < 400 else { throw .upstream(UpstreamAnswer(response)) }
            guard let json = Self.json(response), let token = json[string: "access_token"], !token.isEmpty else {
                throw .malformedAnswer(status: response.status, reason: "no access_token in the token answer")
            }
            let lifetime = json["expires_in"]?.intValue ?? 3600
            return .success(CachedToken(accessToken: token, expiresAt: now() + Double(lifetime)))
        } catch {
            return .failure(error)
        }
    }

    // MARK: Calls

    /// Sends an authorised call; a 401 drops the token and tries once more with a new one.
    /// Throws `.upstream` for any error status left after retries.
    private func call(
        _ method: String, _ path: String, scope: String, body: [UInt8]? = nil,
        contentType: String? = nil
    ) async throws(TruAPIError) -> HTTPClientResponse {
        var refreshed = false
        while true {
            let token = try await token(scopes: [scope])
            var headers = [
                HTTPHeader("Authorization", "Bearer \(token.accessToken)"),
                HTTPHeader("Accept", "application/hal+json, application/json")
            ]
            if let contentType { headers.append(HTTPHeader("Content-Type", contentType)) }
            let response = try await sendRetrying(
                HTTPClientRequest(
                    url: endpoint.trimmedBaseURL + path, method: method, headers: headers,
                    body: body, timeout: timeout, caFile: endpoint.caFile))
            if response.status == 401 && !refreshed {
                refreshed = true
                discard(token, scopes: [scope])
                continue
            }
            guard response.status < 400 else { throw .upstream(UpstreamAnswer(response)) }
            return response
        }
    }

    /// Sends `request`, again after a backoff while the failure is transient and attempts remain.
    /// Returns the last answer, error statuses included; throws only when no answer came.
    private func sendRetrying(_ request: HTTPClientRequest) async throws(TruAPIError) -> HTTPClientResponse {
        var attempt = 1
        while true {
            let failure: TruAPIError
            let response: HTTPClientResponse?
            do throws(FetchFailure) {
                let answer = try await transport.send(request)
                response = answer
                failure = .upstream(UpstreamAnswer(answer))
            } catch {
                response = nil
                failure = .transport(error)
            }
            if let response, response.status < 400 { return response }
            guard let delay = retry.delay(after: failure, attempt: attempt), !Task.isCancelled else {
                if let response { return response }
                throw failure
            }
            await pause(delay)
            attempt += 1
        }
    }

    // MARK: Answers

    /// The answer's body as JSON, whatever JSON media type it was labelled with.
    private static func json(_ response: HTTPClientResponse) -> JSONValue? {
        response.bodyTruncated ? nil : JSONValue.parse(response.body)
    }

    private static func checkResult(_ response: HTTPClientResponse) throws(TruAPIError) -> CheckResult {
        guard let result = json(response).flatMap(CheckResult.init(json:)) else {
            throw .malformedAnswer(status: response.status, reason: "no check_id and status in the check")
        }
        return result
    }

    /// `value` as one URL path segment; refused when it is not `isPlainSegment`.
    private static func segment(_ value: String, _ name: String) throws(TruAPIError) -> String {
        guard isPlainSegment(value) else {
            throw .invalidRequest("invalid \(name): \(String(value.prefix(40)).terminalSafe)")
        }
        return value
    }

    /// Whether `value` can stand in a URL path or query as it is: 1 to 128 letters, digits and `.-_:`
    /// (check ids, IP addresses, country codes), and not a dot segment (`.`, `..`: libcurl would
    /// resolve it into another API route); anything else is refused, not escaped.
    static func isPlainSegment(_ value: String) -> Bool {
        !value.isEmpty && value != "." && value != ".." && value.utf8.count <= 128
            && value.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: ":")
            }
    }
}

/// One caller's wait for a token: resumed once, by the token or by its cancellation.
private final class TokenWaiter: Sendable {
    private let continuation = Mutex<CheckedContinuation<Result<CachedToken, TruAPIError>, Never>?>(nil)

    func wait(_ continuation: CheckedContinuation<Result<CachedToken, TruAPIError>, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    /// Resumes the caller with `result`, unless it was resumed already.
    func resume(_ result: Result<CachedToken, TruAPIError>) {
        continuation.withLock { $0.take() }?.resume(returning: result)
    }
}
