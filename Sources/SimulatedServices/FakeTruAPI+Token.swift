import HTTPServer
import SystemSupport

extension FakeTruAPI {
    /// `POST /oauth2/v1/token`: client credentials in Basic auth, form body with
    /// `grant_type=client_credentials` and a space-separated `scope`. A scope the API does not
    /// grant is refused as a whole with 400 `invalid_scope` (RFC 6749 §5.2); errors are problem
    /// details that also carry OAuth2's `error` and `error_description`.
    func issueToken(_ request: HTTPRequest) -> HTTPResponse {
        guard let (id, secret) = WebEncoding.basicCredentials(request.headers["Authorization"]),
            id == configuration.clientID, secret == configuration.clientSecret
        else {
            return tokenError(
                401, "invalid_client", "Unauthorized", "Invalid client credentials", key: "unauthorized",
                headers: ["WWW-Authenticate": "Basic realm=\"tru.ID\""])
        }
        guard request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true,
            let form = WebEncoding.formFields(request.body)
        else {
            return tokenError(
                400, "invalid_request", "Bad Request", "The body must be application/x-www-form-urlencoded")
        }
        guard form["grant_type"] == "client_credentials" else {
            return tokenError(400, "unsupported_grant_type", "Bad Request", "grant_type must be client_credentials")
        }
        let requested = (form["scope"] ?? "").split(separator: " ").map(String.init)
        guard !requested.isEmpty else {
            return tokenError(400, "invalid_scope", "Bad Request", "At least one scope is required")
        }
        if let unknown = requested.first(where: { !FakeTruAPI.scopes.contains($0) }) {
            return tokenError(400, "invalid_scope", "Bad Request", "Unknown scope '\(unknown)'")
        }
        let token = RandomBytes.hex(32)
        let now = clock.now()
        state.withLock {
            $0.tokens[token] = TokenRecord(
                clientID: id, scopes: Set(requested),
                expiresAt: now + Double(configuration.tokenLifetime))
        }
        return .json(
            200,
            .object([
                ("access_token", .string(token)), ("token_type", .string("bearer")),
                ("expires_in", .int(configuration.tokenLifetime)),
                ("scope", .string(requested.joined(separator: " ")))
            ]),
            headers: ["Cache-Control": "no-store"])
    }

    /// A token endpoint error: problem details whose type key is `key` (the OAuth2 error code
    /// unless given), with `error` and `error_description` added for OAuth2 clients.
    private func tokenError(
        _ status: Int, _ error: String, _ title: String, _ detail: String, key: String? = nil,
        headers: HTTPHeaders = [:]
    ) -> HTTPResponse {
        ProblemDetails.response(
            status, key ?? error, title, detail, headers: headers,
            extra: [("error", .string(error)), ("error_description", .string(detail))])
    }

    /// Checks the Bearer token and its `scope`, counts the request against the client's
    /// hourly limit, then runs `body` with the client id and adds the `X-RateLimit-*` headers
    /// (`-Reset`: when the hour's window ends, in epoch seconds). With no limit, no such headers.
    func withToken(_ request: HTTPRequest, scope: String, _ body: (String) -> HTTPResponse) -> HTTPResponse {
        let unauthorized = { (detail: String) in
            ProblemDetails.response(
                401, "unauthorized", "Unauthorized", detail,
                headers: ["WWW-Authenticate": "Bearer realm=\"tru.ID\", error=\"invalid_token\""])
        }
        guard let header = request.headers["Authorization"], header.lowercased().hasPrefix("bearer ") else {
            return unauthorized("Missing Bearer access token")
        }
        let token = String(header.dropFirst("bearer ".count)).trimmedSpaces
        let now = clock.now()
        guard let record = state.withLock({ $0.tokens[token] }) else { return unauthorized("Invalid access token") }
        guard now < record.expiresAt else { return unauthorized("Access token expired") }
        guard record.scopes.contains(scope) else {
            return ProblemDetails.response(403, "forbidden", "Forbidden", "The access token lacks the scope '\(scope)'")
        }
        guard let limit = configuration.rateLimitPerHour else { return body(record.clientID) }
        let window = state.withLock { state -> RateWindow in
            var window = state.rates[record.clientID] ?? RateWindow(start: now, count: 0)
            if now - window.start >= 3600 { window = RateWindow(start: now, count: 0) }
            window.count += 1
            state.rates[record.clientID] = window
            return window
        }
        let reset = window.start + 3600
        var response: HTTPResponse
        if window.count > limit {
            let retry = max(1, Int((reset - now).rounded(.up)))
            response = ProblemDetails.response(
                429, "too_many_requests", "Rate Limit exceeded",
                "Rate limit of \(limit) requests per hour exceeded",
                headers: ["Retry-After": String(retry)])
        } else {
            response = body(record.clientID)
        }
        response.headers.set("X-RateLimit-Limit", String(limit))
        response.headers.set("X-RateLimit-Remaining", String(max(0, limit - window.count)))
        response.headers.set("X-RateLimit-Reset", String(Int(reset.rounded(.up))))
        return response
    }
}
