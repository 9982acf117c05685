import HTTPServer
import SimulatorScenario
import Synchronization

/// Settings of the fake tru.ID API.
public struct FakeTruAPIConfiguration: Sendable {
    /// The one project's client credentials (from the daemon configuration).
    public var clientID: String
    public var clientSecret: String
    /// The API's own base URL, used in `_links` and `check_url`.
    public var baseURL: String
    /// The carrier's identification endpoint that `check_url` redirects to.
    public var carrierURL: String
    /// The scenario's `api` object: faults and project settings (sandbox, callback_url, check_url refusals).
    public var faults: APIFaults
    /// Requests per client and hour before 429 (reported in `X-RateLimit-*`); nil = unlimited.
    /// The world passes the scenario's `api.rateLimitPerHour`.
    public var rateLimitPerHour: Int?
    /// Seconds a check lives before it is EXPIRED.
    public var checkTTL: Int
    /// Seconds an access token is valid.
    public var tokenLifetime: Int
    /// Checks remembered at most (`CheckStore`); the world passes the scenario's `api.retainedChecks`.
    public var retainedChecks: Int
    /// The world's modems: their networks are the operators that country coverage lists.
    public var modems: [SimulatedModem]

    public init(
        clientID: String, clientSecret: String, baseURL: String = "https://api.truid.test",
        carrierURL: String = "http://mno.carrier.test", faults: APIFaults = APIFaults(),
        rateLimitPerHour: Int? = APIFaults.defaultRateLimitPerHour, checkTTL: Int = 120, tokenLifetime: Int = 3600,
        retainedChecks: Int = APIFaults.defaultRetainedChecks,
        modems: [SimulatedModem] = []
    ) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.baseURL = baseURL
        self.carrierURL = carrierURL
        self.faults = faults
        self.rateLimitPerHour = rateLimitPerHour
        self.checkTTL = checkTTL
        self.tokenLifetime = tokenLifetime
        self.retainedChecks = retainedChecks
        self.modems = modems
    }
}

/// The fake tru.ID REST API (https://api.truid.test): OAuth2 tokens, SubscriberCheck and
/// PhoneCheck v0.1/v0.2 with their check_url chain, SIMCheck and coverage, following the
/// contracts of tru-ID/api-definitions. Safe to call from any thread.
public final class FakeTruAPI: SimulatedHTTPEndpoint {
    /// The access-token scopes the API grants (`mo_check` is granted, though the fake has no MO check routes).
    public static let scopes: Set<String> = ["phone_check", "subscriber_check", "sim_check", "coverage", "mo_check"]

    let configuration: FakeTruAPIConfiguration
    let directory: any SubscriberDirectory
    let ledger: SubscriberAssertionLedger
    let clock: SimulatorClock
    let webhooks: WebhookDispatch?
    let state: Mutex<APIState>

    /// Without `webhooks`, `/.well-known/jwks.json` is an empty key set and no webhook is sent.
    public init(
        configuration: FakeTruAPIConfiguration, directory: any SubscriberDirectory,
        ledger: SubscriberAssertionLedger, clock: SimulatorClock = .system, webhooks: WebhookDispatch? = nil
    ) {
        self.configuration = configuration
        self.directory = directory
        self.ledger = ledger
        self.clock = clock
        self.webhooks = webhooks
        state = Mutex(APIState(checks: CheckStore(capacity: configuration.retainedChecks)))
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        var response = route(request)
        if configuration.faults.slowMs > 0 && response.delivery == .immediately {
            response.delivery = .after(.milliseconds(configuration.faults.slowMs))
        }
        return response
    }

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        if let status = configuration.faults.serverErrorStatus, faultStrikes(\.serverErrorCandidates) {
            return ProblemDetails.response(
                status, "server_error", "Internal Server Error",
                "Simulated server failure (scenario fault)")
        }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch parts.count {
        case 3 where parts == ["oauth2", "v1", "token"]:
            return only(["POST"], request) { issueToken(request) }
        case 3 where parts == ["coverage", "v0.1", "device_ip"]:
            return only(["GET"], request) {
                withToken(request, scope: "coverage") { _ in coverage(address: request.remoteAddress) }
            }
        case 4
        where parts[0] == "coverage" && parts[1] == "v0.1" && (parts[2] == "device_ips" || parts[2] == "device_ip"):
            return only(["GET"], request) { withToken(request, scope: "coverage") { _ in coverage(address: parts[3]) } }
        case 4 where parts[0] == "coverage" && parts[1] == "v0.1" && parts[2] == "countries":
            return only(["GET"], request) { withToken(request, scope: "coverage") { _ in countryCoverage(parts[3]) } }
        case 2 where parts == [".well-known", "jwks.json"]:
            return only(["GET"], request) {
                .json(
                    200, webhooks?.signer.keySet ?? .object([("keys", .array([]))]),
                    headers: ["Cache-Control": "max-age=300"])
            }
        default:
            break
        }
        guard parts.count >= 3, parts[2] == "checks", let kind = CheckKind(product: parts[0], version: parts[1]) else {
            return ProblemDetails.notFound(request.path)
        }
        switch parts.count {
        case 3:
            return only(["POST"], request) {
                withToken(request, scope: kind.product.scope) { client in createCheck(kind, request, client: client) }
            }
        case 4:
            let id = parts[3]
            let methods = kind.hasCodeFlow ? ["GET", "PATCH"] : ["GET"]
            return only(methods, request) {
                withToken(request, scope: kind.product.scope) { client in
                    request.method == "PATCH"
                        ? patchCheck(kind, id: id, request, client: client)
                        : getCheck(kind, id: id, client: client)
                }
            }
        case 5 where parts[4] == "redirect" && kind.product != .simCheck:
            return only(["GET"], request) { openCheckURL(kind, id: parts[3], request) }
        case 5 where parts[4] == "callback" && kind.product != .simCheck:
            return only(["GET"], request) { carrierReturn(kind, id: parts[3], request) }
        default:
            return ProblemDetails.notFound(request.path)
        }
    }

    /// Whether a fault strikes the request it could apply to, counted in `candidates`: every one,
    /// or with `faultEvery` N only every Nth.
    func faultStrikes(_ candidates: WritableKeyPath<APIState, Int>) -> Bool {
        guard let every = configuration.faults.faultEvery else { return true }
        return state.withLock { state in
            state[keyPath: candidates] += 1
            return state[keyPath: candidates] % every == 0
        }
    }

    private func only(_ methods: [String], _ request: HTTPRequest, _ body: () -> HTTPResponse) -> HTTPResponse {
        methods.contains(request.method) ? body() : ProblemDetails.methodNotAllowed(methods)
    }
}

/// The products with checks, by their URL path segment.
enum CheckProduct: String, Sendable {
    case subscriberCheck = "subscriber_check"
    case phoneCheck = "phone_check"
    case simCheck = "sim_check"

    /// The access-token scope the product needs.
    var scope: String { rawValue }
    /// Whether the product reports SIM-change fields.
    var reportsSimChange: Bool { self != .phoneCheck }
}

/// A product at an API version, e.g. SubscriberCheck v0.2.
struct CheckKind: Sendable, Equatable {
    var product: CheckProduct
    var version: String

    init?(product: String, version: String) {
        guard let product = CheckProduct(rawValue: product) else { return nil }
        switch (product, version) {
        case (.subscriberCheck, "v0.1"), (.subscriberCheck, "v0.2"), (.phoneCheck, "v0.1"), (.phoneCheck, "v0.2"),
            (.simCheck, "v0.1"):
            self.product = product
            self.version = version
        default:
            return nil
        }
    }

    /// v0.2 checks end with a code the backend PATCHes; v0.1 complete at the last hop.
    var hasCodeFlow: Bool { version == "v0.2" }
    var pathPrefix: String { "/\(product.rawValue)/\(version)/checks" }
}

/// The lifecycle states of a check.
enum CheckStatus: String, Sendable {
    case accepted = "ACCEPTED", pending = "PENDING", completed = "COMPLETED", expired = "EXPIRED", error = "ERROR"
    var isOpen: Bool { self == .accepted || self == .pending }
}

/// One check as the API stores it.
struct CheckRecord: Sendable {
    var id: String
    var kind: CheckKind
    var clientID: String
    var phoneNumber: String
    var referenceID: String?
    var redirectURL: String?
    var period: Int
    var createdAt: Double
    var updatedAt: Double
    var status: CheckStatus
    /// The v0.2 code issued at the last hop, and whether it was exchanged.
    var code: String?
    var match: Bool?
    var simChange: SimChangeWindow?
    var networkID: String?
    var errorCode: String?
}

/// An issued access token.
struct TokenRecord: Sendable {
    var clientID: String
    var scopes: Set<String>
    var expiresAt: Double
}

/// A client's request count in the current hour.
struct RateWindow: Sendable {
    var start: Double
    var count: Int
}

/// Everything the API remembers, guarded by one mutex.
struct APIState: Sendable {
    var tokens: [String: TokenRecord] = [:]
    var checks: CheckStore
    var rates: [String: RateWindow] = [:]
    /// Requests the server-error fault and check creations the rate-limit fault could have
    /// answered (counted for `faultEvery`).
    var serverErrorCandidates = 0
    var rateLimitCandidates = 0
}
