import CellpathCore
import CellularHTTP
import HTTPServer
import SystemSupport
import Workflow

/// The routes of tru.ID's development server (v0.3.1) and serve's own (`/healthz`, `/metrics`,
/// `/openapi.json`), answered with the API of `provider` (tru.ID's, or another's: 501 for a
/// route it cannot serve).
public struct DevServerRoutes: Sendable {
    let provider: ServedProvider
    let settings: ServeSettings
    let metrics: ServerMetrics
    let log: @Sendable (String) -> Void
    private let rateLimiter: ClientRateLimiter
    private let webhooks: WebhookVerifier
    private let phoneNumbers: PhoneNumberCache

    public init(
        provider: ServedProvider, settings: ServeSettings, metrics: ServerMetrics,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.provider = provider
        self.settings = settings
        self.metrics = metrics
        self.log = log
        rateLimiter = ClientRateLimiter(requestsPerMinute: settings.limits.requestsPerMinute)
        phoneNumbers = PhoneNumberCache(defaultRegion: settings.defaultRegion)
        let endpoint = provider.truAPI?.endpoint, timeout = settings.limits.upstreamTimeout
        webhooks = WebhookVerifier {
            guard let endpoint else { return nil }
            return await Self.fetchKeySet(endpoint, timeout: timeout, log: log)
        }
    }

    /// Answers one request and writes its access-log line.
    public func respond(_ request: HTTPRequest) async -> HTTPResponse {
        let started = ContinuousClock.now
        metrics.started()
        let route = Self.routeName(request.path)
        var response: HTTPResponse
        do throws(ErrorAnswer) {
            response = try await answer(request, route: route)
        } catch {
            response = error.response
        }
        addCORS(to: &response, request)
        metrics.finished(route: route, method: request.method, status: response.status)
        logAccess(
            request, route: route, status: response.status, elapsed: started.duration(to: .now),
            bytes: response.body.count)
        return response
    }

    /// Counts and logs a request that the HTTP server answered itself (413, 503), as `respond`
    /// does its own. Any thread.
    public func answeredByServer(_ request: HTTPRequest, status: Int) {
        let route = Self.routeName(request.path)
        metrics.counted(route: route, method: request.method, status: status)
        logAccess(request, route: route, status: status, elapsed: nil, bytes: nil)
    }

    /// One access-log line: no path or client address unless `--verbose-full`.
    private func logAccess(_ request: HTTPRequest, route: String, status: Int, elapsed: Duration?, bytes: Int?) {
        var line: [(String, JSONValue)] = [
            ("time", .string(WallClock.iso8601(WallClock.now))), ("method", .string(String(request.method.prefix(16)))),
            ("route", .string(route)), ("status", .int(status)),
            ("ms", elapsed.map { .double((Self.seconds($0) * 10_000).rounded() / 10) } ?? .null),
            ("bytes", bytes.map(JSONValue.int) ?? .null)
        ]
        if elapsed == nil { line.append(("answered_by", .string("http-server"))) }
        if settings.logPersonalData {
            line += [("path", .string(request.path)), ("client", .string(request.remoteAddress))]
        }
        log(JSONValue.object(line).serialized)
    }

    /// The route's template for logs and metrics: ids replaced, unknown paths grouped.
    static func routeName(_ path: String) -> String {
        if path.hasPrefix("/subscriber-check/") && path.split(separator: "/").count == 2 && !path.hasSuffix("/") {
            return "/subscriber-check/{check_id}"
        }
        return knownPaths.contains(path) ? path : "other"
    }

    static let knownPaths: Set<String> = [
        "/check", "/phone-check", "/v0.1/phone-check", "/check_status", "/callback", "/phone-check/callback",
        "/v0.1/phone-check/callback",
        "/subscriber-check", "/v0.1/subscriber-check", "/sim-check", "/v0.1/sim-check", "/v0.2/phone-check",
        "/v0.2/subscriber-check",
        "/v0.2/phone-check/exchange-code", "/v0.2/subscriber-check/exchange-code", "/coverage-access-token", "/country",
        "/device",
        "/traces", "/v0.1/traces", "/v0.2/traces", "/healthz", "/metrics", "/openapi.json"
    ]

    private func answer(_ request: HTTPRequest, route: String) async throws(ErrorAnswer) -> HTTPResponse {
        try checkHost(request)
        try checkOrigin(request)
        if request.method == "OPTIONS" { return HTTPResponse(status: 204) }
        if route != "/healthz" && route != "/metrics" {
            if !Self.webhookPaths.contains(route) { try authorize(request) }
            if let wait = rateLimiter.admit(request.remoteAddress, now: WallClock.now) {
                throw ErrorAnswer(429, "too many requests", headers: ["Retry-After": String(wait)])
            }
        }
        if request.body.count > settings.limits.maxBodyBytes { throw ErrorAnswer(413, "the request body is too large") }
        let path = request.path
        switch path {
        case "/healthz": return try await method(request, ["GET"]) { () async throws(ErrorAnswer) in await health() }
        case "/metrics":
            return try await method(request, ["GET"]) { () async throws(ErrorAnswer) in
                HTTPResponse(
                    status: 200, contentType: "text/plain; version=0.0.4",
                    body: metrics.exposition(tokenRequests: await provider.truAPI?.tokenRequests ?? 0))
            }
        case "/openapi.json":
            return try await method(request, ["GET"]) { () async throws(ErrorAnswer) in
                HTTPResponse(status: 200, contentType: "application/json", body: OpenAPIDocument.json)
            }
        case "/check", "/phone-check", "/v0.1/phone-check", "/check_status":
            let create = path != "/check_status" ? ["POST"] : []
            let methods = path == "/check" ? ["POST"] : create + ["GET"]
            return try await method(request, methods) { () async throws(ErrorAnswer) in
                request.method == "POST"
                    ? try await createCheck(request, .phoneCheck, .v0_1)
                    : try await checkResult(request, .phoneCheck, .v0_1, checkID: nil)
            }
        case "/subscriber-check", "/v0.1/subscriber-check":
            return try await method(request, ["POST", "GET"]) { () async throws(ErrorAnswer) in
                request.method == "POST"
                    ? try await createCheck(request, .subscriberCheck, .v0_1)
                    : try await checkResult(request, .subscriberCheck, .v0_1, checkID: nil)
            }
        case "/v0.2/phone-check", "/v0.2/subscriber-check":
            let product: CheckProduct = path.contains("phone") ? .phoneCheck : .subscriberCheck
            return try await method(request, ["POST", "GET"]) { () async throws(ErrorAnswer) in
                request.method == "POST"
                    ? try await createCheck(request, product, .v0_2)
                    : try await checkResult(request, product, .v0_2, checkID: nil)
            }
        case "/v0.2/phone-check/exchange-code", "/v0.2/subscriber-check/exchange-code":
            let product: CheckProduct = path.contains("phone") ? .phoneCheck : .subscriberCheck
            return try await method(request, ["GET", "POST"]) { () async throws(ErrorAnswer) in
                try await exchangeCode(request, product)
            }
        case "/sim-check", "/v0.1/sim-check":
            return try await method(request, ["POST"]) { () async throws(ErrorAnswer) in try await simCheck(request) }
        case "/coverage-access-token":
            guard settings.offersCoverageToken else {
                throw ErrorAnswer(
                    404, "the coverage-access-token route is off (serve --coverage-token-route turns it on)")
            }
            return try await method(request, ["GET"]) { () async throws(ErrorAnswer) in
                try await coverageToken(try truAPI(route))
            }
        case "/country":
            return try await method(request, ["GET"]) { () async throws(ErrorAnswer) in
                let client = try truAPI(route)
                let code = try readParameters(request).required("country_code")
                return try await upstream { () async throws(TruAPIError) in try await client.coverage(countryCode: code)
                }
            }
        case "/device":
            return try await method(request, ["GET"]) { () async throws(ErrorAnswer) in
                let client = try truAPI(route)
                let parameters = try readParameters(request)
                let given = try parameters.optional("ip_address")
                let misspelt = try parameters.optional("id_address")
                let address = given ?? misspelt ?? request.remoteAddress
                return try await upstream { () async throws(TruAPIError) in try await client.coverage(deviceIP: address)
                }
            }
        case "/callback", "/phone-check/callback", "/v0.1/phone-check/callback":
            return try await method(request, ["POST"]) { () async throws(ErrorAnswer) in
                _ = try truAPI(route)
                return try await webhook(request)
            }
        case "/traces", "/v0.1/traces", "/v0.2/traces":
            return try await method(request, ["POST"]) { () async throws(ErrorAnswer) in trace(request) }
        default:
            if route == "/subscriber-check/{check_id}" {
                let checkID = String(path.dropFirst("/subscriber-check/".count))
                return try await method(request, ["GET"]) { () async throws(ErrorAnswer) in
                    try await checkResult(request, .subscriberCheck, .v0_1, checkID: checkID)
                }
            }
            throw ErrorAnswer(404, "no such route")
        }
    }

    /// Runs `body` when the request's method is one of `methods`; 405 with `Allow` otherwise.
    private func method(
        _ request: HTTPRequest, _ methods: [String],
        _ body: () async throws(ErrorAnswer) -> HTTPResponse
    ) async throws(ErrorAnswer) -> HTTPResponse {
        guard methods.contains(request.method) else {
            throw ErrorAnswer(
                405, "method not allowed", headers: ["Allow": (methods + ["OPTIONS"]).joined(separator: ", ")])
        }
        return try await body()
    }

    /// Refuses a request without the configured client key (constant-time comparison).
    private func authorize(_ request: HTTPRequest) throws(ErrorAnswer) {
        guard let key = settings.apiKey else { return }
        let bearer = request.headers["Authorization"].flatMap {
            $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil
        }
        guard let given = request.headers["X-Api-Key"] ?? bearer,
            Self.constantTimeEqual(Array(given.utf8), Array(key.utf8))
        else {
            throw ErrorAnswer(401, "a valid client key is required", headers: ["WWW-Authenticate": "Bearer"])
        }
    }

    /// Refuses (421) a `Host` that is not serve's listen address or one of its configured names:
    /// a web page whose name was rebound to serve's address would name itself.
    private func checkHost(_ request: HTTPRequest) throws(ErrorAnswer) {
        guard let host = request.headers["Host"].flatMap(Self.hostName), Self.hostAllowed(host, settings) else {
            throw ErrorAnswer(421, "this server is not reached by that Host name (serve --server-name NAME allows one)")
        }
    }

    /// Whether `host` (a `hostName`) names serve as `settings` say it listens.
    static func hostAllowed(_ host: String, _ settings: ServeSettings) -> Bool {
        if settings.serverNames.contains(where: { Self.hostName($0) == host }) { return true }
        let listen = IPLiteral(settings.listenAddress)
        if host == "localhost" { return listen.map { $0.isLoopback || $0.isUnspecified } ?? false }
        guard let given = IPLiteral(host) else { return false }
        return listen.map { $0.isUnspecified || $0 == given } ?? false
    }

    /// The name of a `Host` value (or a configured name): lower case, without port, brackets or
    /// final dot; nil when empty.
    static func hostName(_ value: String) -> String? {
        var text = Substring(value.lowercased())
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = text[text.index(after: text.startIndex) ..< close]
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            text = text[..<colon]
        }
        if text.hasSuffix(".") { text = text.dropLast() }
        return text.isEmpty ? nil : String(text)
    }

    /// Refuses (403) a request sent by a web page of an origin not given with `--cors-origin`:
    /// browsers name the page's origin, apps do not send one.
    private func checkOrigin(_ request: HTTPRequest) throws(ErrorAnswer) {
        guard let origin = request.headers["Origin"], !settings.corsOrigins.contains("*"),
            !settings.corsOrigins.contains(origin)
        else { return }
        throw ErrorAnswer(
            403, "requests from web pages of this origin are not allowed (serve --cors-origin ORIGIN allows one)")
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private func addCORS(to response: inout HTTPResponse, _ request: HTTPRequest) {
        guard let origin = request.headers["Origin"] else { return }
        if settings.corsOrigins.contains("*") {
            response.headers.set("Access-Control-Allow-Origin", "*")
        } else if settings.corsOrigins.contains(origin) {
            response.headers.set("Access-Control-Allow-Origin", origin)
            response.headers.set("Vary", "Origin")
        } else {
            return
        }
        response.headers.set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        response.headers.set("Access-Control-Allow-Headers", "Content-Type, Authorization, X-Api-Key")
    }

    // MARK: Products

    /// The request's parameters, form bodies read only when serve allows them.
    func readParameters(_ request: HTTPRequest) throws(ErrorAnswer) -> RequestParameters {
        try RequestParameters(request, allowsForm: settings.allowsFormBodies)
    }

    /// The tru.ID API client for a route only tru.ID serves; 501 with another provider.
    private func truAPI(_ route: String) throws(ErrorAnswer) -> TruAPIClient {
        guard let client = provider.truAPI else { throw provider.notServed(route, provider.noTruIDRoute) }
        return client
    }

    func phoneNumber(_ parameters: RequestParameters) throws(ErrorAnswer) -> String {
        let input = try parameters.required("phone_number")
        do throws(CellpathError) {
            return try phoneNumbers.e164(input)
        } catch {
            throw ErrorAnswer(400, "phone_number is not a valid phone number: \(error.message)")
        }
    }

    private func createCheck(
        _ request: HTTPRequest, _ product: CheckProduct, _ version: APIVersion
    ) async throws(ErrorAnswer) -> HTTPResponse {
        let parameters = try readParameters(request)
        let number = try phoneNumber(parameters)
        let redirectURL = version == .v0_2 ? try parameters.optional("redirect_url") : nil
        guard let client = provider.truAPI else {
            return try await createVerification(request, phoneNumber: number, redirectURL: redirectURL)
        }
        let created = try await call { () async throws(TruAPIError) in
            try await client.createCheck(product, version: version, phoneNumber: number, redirectURL: redirectURL)
        }
        return Self.json(200, [("check_id", .string(created.checkID)), ("check_url", .string(created.checkURL))])
    }

    private func checkResult(
        _ request: HTTPRequest, _ product: CheckProduct, _ version: APIVersion,
        checkID given: String?
    ) async throws(ErrorAnswer) -> HTTPResponse {
        let checkID: String
        if let given { checkID = given } else { checkID = try readParameters(request).required("check_id") }
        guard let client = provider.truAPI else {
            return try await verificationResult(request, product, version, checkID: checkID)
        }
        let result = try await call { () async throws(TruAPIError) in
            try await client.checkResult(product, version: version, checkID: checkID)
        }
        var body: [(String, JSONValue)] = [
            ("match", result.match.map(JSONValue.bool) ?? .null), ("check_id", .string(result.checkID))
        ]
        if product == .subscriberCheck {
            body.append(("no_sim_change", result.noSimChange.map(JSONValue.bool) ?? .null))
            if version == .v0_1 {
                body.append(("last_sim_change_at", result.lastSimChangeAt.map(JSONValue.string) ?? .null))
            }
        }
        return Self.json(200, body)
    }

    private func exchangeCode(_ request: HTTPRequest, _ product: CheckProduct) async throws(ErrorAnswer) -> HTTPResponse
    {
        let parameters = try readParameters(request)
        let code = try parameters.required("code")
        let checkID = try parameters.required("check_id")
        guard let client = provider.truAPI else {
            return try await completeVerification(request, product, checkID: checkID, code: code)
        }
        let result = try await call { () async throws(TruAPIError) in
            try await client.completeCheck(product, checkID: checkID, code: code)
        }
        var body: [(String, JSONValue)] = [
            ("check_id", .string(result.checkID)), ("match", result.match.map(JSONValue.bool) ?? .null)
        ]
        if product == .subscriberCheck {
            body.append(("no_sim_change", result.noSimChange.map(JSONValue.bool) ?? .null))
        }
        return Self.json(200, body)
    }

    private func simCheck(_ request: HTTPRequest) async throws(ErrorAnswer) -> HTTPResponse {
        let number = try phoneNumber(try readParameters(request))
        guard let client = provider.truAPI else { return try await simSwapCheck(request, phoneNumber: number) }
        let result = try await call { () async throws(TruAPIError) in try await client.simCheck(phoneNumber: number) }
        return Self.json(
            200,
            [
                ("no_sim_change", result.noSimChange.map(JSONValue.bool) ?? .null),
                ("last_sim_change_at", result.lastSimChangeAt.map(JSONValue.string) ?? .null),
                ("sim_change_within", result.simChangeWithin.map(JSONValue.int) ?? .null),
                ("check_id", .string(result.checkID))
            ])
    }

    private func coverageToken(_ client: TruAPIClient) async throws(ErrorAnswer) -> HTTPResponse {
        let token = try await call { () async throws(TruAPIError) in try await client.accessToken(scopes: ["coverage"])
        }
        let base =
            client.endpoint.baseURL.hasSuffix("/")
            ? String(client.endpoint.baseURL.dropLast()) : client.endpoint.baseURL
        return Self.json(200, [("token", .string(token)), ("url", .string(base + "/coverage/v0.1/device_ip"))])
    }

    /// The webhook routes: signed by tru.ID, so they need no client key.
    static let webhookPaths: Set<String> = ["/callback", "/phone-check/callback", "/v0.1/phone-check/callback"]

    /// A tru.ID webhook: 200 `{}` when its signature verifies (the check's id and status logged), 400 otherwise.
    private func webhook(_ request: HTTPRequest) async throws(ErrorAnswer) -> HTTPResponse {
        if let problem = await webhooks.problem(
            method: request.method, target: request.target, headers: request.headers,
            body: request.body, now: WallClock.now)
        {
            throw ErrorAnswer(400, "the webhook does not verify: \(problem)")
        }
        let event = JSONValue.parse(request.body)
        log(
            JSONValue.object([
                ("webhook", .string(request.headers["x-tru-callback"] ?? "")),
                ("check_id", .string(event?[string: "check_id"] ?? "")),
                ("status", .string(event?[string: "status"] ?? ""))
            ]).serialized)
        return Self.json(200, [])
    }

    /// The API's JWK Set (`{base}/.well-known/jwks.json`), or nil (logged) when it cannot be had.
    static func fetchKeySet(
        _ endpoint: TruAPIEndpoint, timeout: Duration, log: @Sendable (String) -> Void
    ) async -> JSONValue? {
        let base = endpoint.baseURL.hasSuffix("/") ? String(endpoint.baseURL.dropLast()) : endpoint.baseURL
        let request = HTTPClientRequest(
            url: base + "/.well-known/jwks.json",
            headers: [HTTPHeader("Accept", "application/json")], timeout: timeout, caFile: endpoint.caFile)
        do throws(FetchFailure) {
            let response = try await HTTPClient(route: .defaultNetwork).send(request)
            if response.status == 200, let json = response.json { return json }
            log(JSONValue.object([("event", .string("jwks_failed")), ("status", .int(response.status))]).serialized)
        } catch {
            log(JSONValue.object([("event", .string("jwks_failed")), ("reason", .string(error.message))]).serialized)
        }
        return nil
    }

    /// Writes a device trace to the log, bounded and with digit runs (numbers, addresses) masked.
    private func trace(_ request: HTTPRequest) -> HTTPResponse {
        let kept = request.body.prefix(settings.limits.maxTraceBytes)
        let text = String(decoding: kept, as: UTF8.self)
        let redacted = settings.logPersonalData ? text : Self.maskingDigitRuns(text)
        log(
            JSONValue.object([
                ("trace", .string(redacted)), ("bytes", .int(request.body.count)),
                ("truncated", .bool(kept.count < request.body.count))
            ]).serialized)
        return Self.json(200, [])
    }

    /// `text` with every run of 4 or more digits replaced by `#`s.
    static func maskingDigitRuns(_ text: String) -> String {
        var out = "", run = ""
        for character in text {
            if character.isASCII && character.isNumber { run.append(character); continue }
            out += run.count >= 4 ? String(repeating: "#", count: run.count) : run
            run = ""
            out.append(character)
        }
        return out + (run.count >= 4 ? String(repeating: "#", count: run.count) : run)
    }

    private func health() async -> HTTPResponse {
        guard let client = provider.truAPI else {
            return Self.json(200, [("status", .string("ok")), ("provider", .string(provider.name))])
        }
        do throws(TruAPIError) {
            _ = try await client.accessToken(scopes: ["coverage"])
            return Self.json(200, [("status", .string("ok")), ("upstream_token", .string("valid"))])
        } catch {
            return Self.json(
                503, [("status", .string("unavailable")), ("upstream_token", .string(error.cellpathError.message))])
        }
    }

    // MARK: Upstream

    /// Runs an API call, timing it; an API error answer is passed on with its status and body, a
    /// malformed answer or an unreachable API becomes 502, a timeout 504 (short JSON messages).
    private func call<T: Sendable>(_ body: () async throws(TruAPIError) -> T) async throws(ErrorAnswer) -> T {
        let started = ContinuousClock.now
        defer { timed(since: started) }
        do {
            return try await body()
        } catch {
            throw Self.errorAnswer(error)
        }
    }

    /// A coverage answer passed on with the API's status.
    private func upstream(_ body: () async throws(TruAPIError) -> APIAnswer) async throws(ErrorAnswer) -> HTTPResponse {
        let answer = try await call(body)
        return HTTPResponse(status: answer.status, contentType: "application/json", body: answer.json.serialized)
    }

    /// Counts an upstream call that began at `started` in the latency histogram.
    func timed(since started: ContinuousClock.Instant) {
        metrics.upstreamCall(seconds: Self.seconds(started.duration(to: .now)))
    }

    static func errorAnswer(_ error: TruAPIError) -> ErrorAnswer {
        switch error {
        case .upstream(let answer):
            var passed = ErrorAnswer(answer.status, "")
            passed.passThrough = answer
            return passed
        case .invalidRequest(let reason):
            return ErrorAnswer(400, reason)
        case .malformedAnswer:
            return ErrorAnswer(502, "the tru.ID API answered with a body that is not what its contract says")
        case .transport(let failure) where [.connectTimeout, .hopTimeout, .totalTimeout].contains(failure.reason):
            return ErrorAnswer(504, "the tru.ID API did not answer in time")
        case .transport:
            return ErrorAnswer(502, "the tru.ID API cannot be reached")
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func json(_ status: Int, _ members: [(String, JSONValue)]) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: JSONValue.object(members).serialized)
    }
}
