import CellpathCore
import CellularHTTP

/// How a provider's device SDK opens the URL its backend returned, as data that the one
/// cellular chain (`CellularHTTP`, fail-closed over the bearer) applies: the headers it sends,
/// its hop limit and per-hop timeout, whether every hop must stay on https, and how the chain ends.
public struct DeviceLegRules: Sendable, Equatable {
    /// The rule set's name in the reports (`truid`, `twilio-sna`, `vonage-silent-auth`).
    public var name: String
    /// Headers sent on every hop; a value `DeviceLegRules.requestID` becomes a fresh UUID per chain.
    public var headers: [HTTPHeader]
    /// Whether the first hop carries `x-tru-ops` (the SIM's network), as tru.ID's SDKs send it.
    public var sendsOperatorHeader: Bool
    /// Most requests the SDK makes; nil keeps the command's `--max-hops`.
    public var maxHops: Int?
    /// The SDK's budget of one hop; nil keeps the configuration's.
    public var hopTimeout: Duration?
    /// Every hop over https: a downgrade ends the chain, whatever `--allow-downgrade` says.
    public var httpsOnly: Bool
    /// What the chain's last answer carries.
    public var ending: ChainEnding
    /// Whether an ending that carries an error still goes to the provider to complete: it may
    /// be a verdict (Vonage's `user_rejected`: the number is not the SIM's), or an error the
    /// provider names (OAuth's at an OIDC redirect URI).
    public var errorEndingIsVerdict: Bool
    /// The OIDC client's redirect URI, where the chain ends unrequested (`ChainEnding.authorizationCode`).
    public var redirectURI: RedirectURIEnd?

    /// The placeholder of a header value that each chain replaces with a fresh UUID.
    public static let requestID = "<uuid>"

    public init(
        name: String, headers: [HTTPHeader] = [], sendsOperatorHeader: Bool = false, maxHops: Int? = nil,
        hopTimeout: Duration? = nil, httpsOnly: Bool, ending: ChainEnding, errorEndingIsVerdict: Bool = false,
        redirectURI: RedirectURIEnd? = nil
    ) {
        self.name = name
        self.headers = headers
        self.sendsOperatorHeader = sendsOperatorHeader
        self.maxHops = maxHops
        self.hopTimeout = hopTimeout
        self.httpsOnly = httpsOnly
        self.ending = ending
        self.errorEndingIsVerdict = errorEndingIsVerdict
        self.redirectURI = redirectURI
    }

    /// tru.ID's SDKs: `x-tru-ops` on the first hop, the carrier's plain-http leg allowed, the
    /// v0.2 callback at the end.
    public static let truID = DeviceLegRules(
        name: "truid", sendsOperatorHeader: true, httpsOnly: false, ending: .checkCallback)

    /// `request` with these rules applied: the headers (fresh UUIDs), the tighter hop limit,
    /// the SDK's hop timeout, downgrades refused when https-only, the end at the redirect URI.
    public func applied(to request: FetchRequest) -> FetchRequest {
        var request = request
        request.headers += headers.map {
            HTTPHeader($0.name, $0.value == Self.requestID ? UUIDv4.random() : $0.value)
        }
        if let maxHops { request.maxHops = min(request.maxHops, maxHops) }
        if let hopTimeout { request.hopTimeout = hopTimeout }
        if httpsOnly { request.strict = true }
        if let redirectURI { request.stop(at: redirectURI) }
        return request
    }
}

/// How a device leg's chain ends, and what the ending carries, as a `CheckCallback` (the id,
/// and a code or an error) that the provider completes the verification with.
public enum ChainEnding: String, Sendable, Equatable {
    /// tru.ID v0.2: a final JSON `{check_id, code}` (or `error`), or a redirect to the check's
    /// `redirect_url` with them in its query.
    case checkCallback = "check_callback"
    /// Vonage silent auth: a final JSON `{request_id, code}` (a failure: `{request_id, error,
    /// error_description}`), or a redirect to the request's `redirect_url` with them in its fragment.
    case requestIDAndCode = "request_id_and_code"
    /// Twilio SNA: a final 200 text `ErrorCode=0&ErrorDescription=Success&Carrier=…`; 0 means
    /// the carrier decided, a negative code is a failure.
    case snaErrorCode = "sna_error_code"
    /// OIDC's authorization code flow (CAMARA Number Verification): a redirect to the client's
    /// redirect URI (`DeviceLegRules.redirectURI`), unrequested, with `code` and `state`, or
    /// `error`, in its query. The callback's `checkID` is the `state` it carries.
    case authorizationCode = "authorization_code"

    /// Whether the chain stops at a redirect to `url` instead of requesting it: it carries the
    /// ending (the app's `redirect_url`).
    func stopsAt(_ url: String) -> Bool {
        switch self {
        case .checkCallback: CheckCallback(redirectURL: url) != nil
        case .requestIDAndCode: Self.requestIDAndCode(in: Credentials.queryItems(of: url)) != nil
        case .snaErrorCode, .authorizationCode: false
        }
    }

    /// What a completed chain ended with, for the verification `checkID`; nil when the chain
    /// did not complete or its end carries nothing of this shape.
    func callback(of trace: FetchReport, checkID: String) -> CheckCallback? {
        guard let result = trace.result else { return nil }
        switch self {
        case .checkCallback:
            return CheckURLReport.callback(of: trace)
        case .requestIDAndCode:
            if let stopped = result.stoppedAt {
                return Self.requestIDAndCode(in: Credentials.queryItems(of: stopped))
            }
            guard let json = result.json, let id = json[string: "request_id"] else { return nil }
            if let code = json[string: "code"] { return CheckCallback(checkID: id, code: code) }
            guard let error = json[string: "error"] else { return nil }
            return CheckCallback(checkID: id, error: error, errorDescription: json[string: "error_description"])
        case .snaErrorCode:
            guard result.finalStatus == 200 else { return nil }
            return SNAErrorCode(body: result.finalBody).map { $0.callback(checkID: checkID) }
        case .authorizationCode:
            guard let stopped = result.stoppedAt else { return nil }
            let items = Credentials.queryItems(of: stopped)
            func value(_ name: String) -> String? { items.last { $0.name == name }?.value }
            return CheckCallback(
                checkID: value("state") ?? "", code: value("code"), error: value("error"),
                errorDescription: value("error_description"))
        }
    }

    private static func requestIDAndCode(in items: [(name: String, value: String)]) -> CheckCallback? {
        guard let id = items.first(where: { $0.name == "request_id" })?.value, !id.isEmpty,
            let code = items.first(where: { $0.name == "code" })?.value
        else { return nil }
        return CheckCallback(checkID: id, code: code)
    }
}
