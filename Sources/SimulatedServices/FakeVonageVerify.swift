import CellpathCore
import CellpathCrypto
import HTTPServer
import SimulatorScenario
import Synchronization
import SystemSupport

/// The fake Vonage Verify v2 API (https://api.vonage.test) with the `silent_auth` channel, as
/// Vonage's server SDKs and docs describe it: `POST /v2/verify` (application JWT or Basic
/// key:secret; `brand`, `workflow[]` with silent_auth first) → 202 `{request_id, check_url}`; the
/// device opens `check_url` (one redirect on the same host) and the chain ends with `{request_id,
/// code}`, or at the request's `redirect_url` with them in its fragment; `POST /v2/verify/{id}`
/// `{code}` → `{request_id, status: completed}`. The subscriber is identified by the request's
/// source address (only a bearer's succeeds: the fake's failure answers are `{request_id, error,
/// error_description}`); the Virtual Operator's numbers (`990…`) answer by their ending: even
/// completed, odd user_rejected, `…99` failed. Errors are RFC 7807 problems; the scenario's
/// `VonageVerifyFaults` replace these answers with Vonage's documented failures. Any thread.
public final class FakeVonageVerify: SimulatedHTTPEndpoint {
    public struct Configuration: Sendable {
        public var applicationID: String
        /// The application's key: the fake checks JWT signatures with its public half.
        public var applicationKey: JWSKey?
        public var apiKey: String
        public var apiSecret: String
        /// `https://api.vonage.test`: the base of `check_url`.
        public var baseURL: String

        public init(
            applicationID: String, applicationKey: JWSKey?, apiKey: String, apiSecret: String,
            baseURL: String = "https://api.vonage.test"
        ) {
            self.applicationID = applicationID
            self.applicationKey = applicationKey
            self.apiKey = apiKey
            self.apiSecret = apiSecret
            self.baseURL = baseURL
        }
    }

    /// One verification request as the fake remembers it.
    struct Request: Sendable {
        var id: String
        /// E.164 digits without '+'.
        var to: String
        var redirectURL: String?
        var checkURLOpened = false
        var code: String?
        var wrongCodes = 0
        var status = "in_progress"
    }

    /// Wrong codes a request takes before it is over (410).
    static let maxWrongCodes = 3

    let configuration: Configuration
    let directory: any SubscriberDirectory
    let faults: VonageVerifyFaults
    private let requests = Mutex<[String: Request]>([:])

    public init(
        configuration: Configuration, directory: any SubscriberDirectory,
        faults: VonageVerifyFaults = VonageVerifyFaults()
    ) {
        self.configuration = configuration
        self.directory = directory
        self.faults = faults
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard parts.count >= 2, parts[0] == "v2", parts[1] == "verify" else { return Self.notFound(request.path) }
        switch (parts.count, request.method) {
        case (5, "GET") where parts[3] == "silent-auth" && parts[4] == "redirect":
            return .redirect(configuration.baseURL + "/v2/verify/\(parts[2])/silent-auth/callback")
        case (5, "GET") where parts[3] == "silent-auth" && parts[4] == "callback":
            return openCheckURL(parts[2], from: request.remoteAddress)
        case (2, "POST"), (3, "POST"):
            guard authorized(request) else {
                return Self.problem(401, "unauthorized", "Unauthorized", "Invalid credentials supplied")
            }
            guard let body = JSONValue.parse(request.body) else {
                return Self.problem(422, "invalid-params", "Invalid params", "The body must be a JSON object")
            }
            return parts.count == 2 ? create(body) : check(parts[2], body)
        default:
            return Self.notFound(request.path)
        }
    }

    /// A valid application JWT (RS256 by the application's key, its `application_id`, not
    /// expired) or the Basic key:secret.
    private func authorized(_ request: HTTPRequest) -> Bool {
        let header = request.headers["Authorization"] ?? ""
        if let (key, secret) = WebEncoding.basicCredentials(header) {
            return key == configuration.apiKey && secret == configuration.apiSecret
        }
        guard header.hasPrefix("Bearer "), let key = configuration.applicationKey else { return false }
        guard let claims = CompactJWT.verifiedClaims(of: String(header.dropFirst("Bearer ".count)), with: key),
            claims[string: "application_id"] == configuration.applicationID,
            let expires = claims["exp"]?.intValue, expires > Int(WallClock.now)
        else { return false }
        return true
    }

    /// `POST /v2/verify`: `brand`, `workflow` (1 to 3 channels, silent_auth first, `to` digits).
    private func create(_ body: JSONValue) -> HTTPResponse {
        guard body[string: "brand"]?.isEmpty == false else { return Self.invalid("brand is required") }
        guard case .array(let workflow)? = body["workflow"], (1 ... 3).contains(workflow.count) else {
            return Self.invalid("workflow must hold 1 to 3 channels")
        }
        guard workflow[0][string: "channel"] == "silent_auth", let to = workflow[0][string: "to"],
            (7 ... 15).contains(to.count), to.allSatisfy({ $0.isASCII && $0.isNumber })
        else {
            return Self.invalid("silent_auth must be the first channel, with `to` in E.164 without '+'")
        }
        let known: Set = ["silent_auth", "sms", "whatsapp", "voice", "email"]
        guard workflow.allSatisfy({ $0[string: "channel"].map(known.contains) == true }) else {
            return Self.invalid("unknown channel in workflow")
        }
        if faults.rateLimited {
            return Self.problem(429, "rate-limit", "Rate Limit Hit", "Please wait, then retry your request")
        }
        let id = UUIDv4.random()
        if faults.concurrent {
            return Self.problem(
                409, "conflict", "Conflict", "Concurrent verifications to the same number are not allowed.",
                extra: [("request_id", .string(UUIDv4.random()))])
        }
        let concurrent = requests.withLock { all -> String? in
            if let pending = all.values.first(where: { $0.to == to && $0.status == "in_progress" }) {
                return pending.id
            }
            all[id] = Request(id: id, to: to, redirectURL: workflow[0][string: "redirect_url"])
            return nil
        }
        if let concurrent {
            return Self.problem(
                409, "conflict", "Conflict", "Concurrent verifications to the same number are not allowed.",
                extra: [("request_id", .string(concurrent))])
        }
        return .json(
            202,
            .object([
                ("request_id", .string(id)),
                ("check_url", .string(configuration.baseURL + "/v2/verify/\(id)/silent-auth/redirect"))
            ]))
    }

    /// The check_url's last hop: once per request; the code when the subscriber holding the
    /// source address has the number (or a Virtual Operator number says so).
    private func openCheckURL(_ id: String, from address: String) -> HTTPResponse {
        let subscriber = directory.subscriber(holding: address)
        let outcome = requests.withLock { all -> (Request, String?)? in
            guard var request = all[id] else { return nil }
            defer { all[id] = request }
            guard !request.checkURLOpened, request.status == "in_progress" else {
                return (request, "failed: the check_url was already used")
            }
            request.checkURLOpened = true
            guard let subscriber else {
                request.status = "failed"
                return (request, "failed: the request did not come from a mobile network")
            }
            let ending =
                faults.silentAuthStatus?.rawValue ?? Self.virtualOperatorOutcome(request.to)
                ?? (subscriber.msisdn == "+" + request.to ? "completed" : "user_rejected")
            switch ending {
            case "completed":
                request.code = RandomBytes.hex(4)
                return (request, nil)
            default:
                request.status = ending
                return (request, "\(ending): the network did not confirm the number")
            }
        }
        guard let (request, failure) = outcome else { return Self.notFound("/v2/verify/\(id)") }
        let named = faults.wrongRequestID ? UUIDv4.random() : request.id
        guard let failure else {
            if let redirect = request.redirectURL {
                return .redirect(redirect + "#request_id=\(named)&code=\(request.code ?? "")")
            }
            return .json(200, .object([("request_id", .string(named)), ("code", .string(request.code ?? ""))]))
        }
        let error = String(failure.prefix { $0 != ":" })
        return .json(
            error == "user_rejected" ? 403 : 409,
            .object([
                ("request_id", .string(request.id)), ("error", .string(error)),
                ("error_description", .string(String(failure.drop { $0 != ":" }.dropFirst(2))))
            ]))
    }

    /// The Virtual Operator's test numbers (`990…`): even completed, odd user_rejected, `…99`
    /// failed; nil for any other number.
    static func virtualOperatorOutcome(_ to: String) -> String? {
        guard to.hasPrefix("990"), let last = to.last?.wholeNumberValue else { return nil }
        if to.hasSuffix("99") { return "failed" }
        return last % 2 == 0 ? "completed" : "user_rejected"
    }

    /// `POST /v2/verify/{id}` `{code}`.
    private func check(_ id: String, _ body: JSONValue) -> HTTPResponse {
        guard let code = body[string: "code"] else { return Self.invalid("code is required") }
        enum Answer { case unknown, noCode, wrong, tooMany, completed }
        let answer = requests.withLock { all -> Answer in
            guard var request = all[id], request.status == "in_progress" else { return .unknown }
            defer { all[id] = request }
            guard let expected = request.code, !faults.wrongState else { return .noCode }
            guard code == expected else {
                request.wrongCodes += 1
                if request.wrongCodes >= Self.maxWrongCodes {
                    request.status = "failed"
                    return .tooMany
                }
                return .wrong
            }
            request.status = "completed"
            return .completed
        }
        switch answer {
        case .unknown: return Self.notFound("/v2/verify/\(id)")
        case .noCode:
            return Self.problem(409, "conflict", "Conflict", "The current workflow step does not take a code.")
        case .wrong: return Self.problem(400, "invalid-code", "Invalid Code", "The code you provided does not match.")
        case .tooMany: return Self.problem(410, "gone", "Gone", "An incorrect code was provided too many times.")
        case .completed: return .json(200, .object([("request_id", .string(id)), ("status", .string("completed"))]))
        }
    }

    private static func notFound(_ path: String) -> HTTPResponse {
        problem(404, "not-found", "Not Found", "Request \(path) was not found or it has been verified already.")
    }

    private static func invalid(_ detail: String) -> HTTPResponse {
        problem(422, "invalid-params", "Invalid params", detail)
    }

    /// An RFC 7807 problem with Vonage's error `type` URL.
    static func problem(
        _ status: Int, _ key: String, _ title: String, _ detail: String, extra: [(String, JSONValue)] = []
    ) -> HTTPResponse {
        .json(
            status,
            .object(
                [
                    ("type", .string("https://developer.vonage.com/api-errors#\(key)")), ("title", .string(title)),
                    ("detail", .string(detail)), ("instance", .string(UUIDv4.random()))
                ] + extra),
            contentType: "application/problem+json")
    }
}
