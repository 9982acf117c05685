import CellpathCore
import CellularHTTP
import SystemSupport

/// How calls to Vonage authenticate: an application JWT (RS256, signed with the application's
/// private key; Vonage sends silent-auth webhooks only then) or Basic api_key:api_secret.
public enum VonageAuthentication: Sendable {
    /// `sign` returns the RS256 signature of its bytes (the caller holds the key).
    case applicationJWT(applicationID: String, sign: @Sendable ([UInt8]) -> [UInt8])
    case basic(apiKey: String, apiSecret: String)

    /// The `Authorization` header: a fresh application JWT, or Basic key:secret. Vonage's
    /// network APIs (Number Verification's token endpoint) take the same header.
    public func header() -> HTTPHeader {
        switch self {
        case .basic(let key, let secret):
            return HTTPHeader("Authorization", "Basic " + Base64.encode("\(key):\(secret)".utf8))
        case .applicationJWT(let applicationID, let sign):
            let now = Int(WallClock.now)
            return HTTPHeader(
                "Authorization",
                "Bearer "
                    + VonageVerifyClient.applicationJWT(
                        applicationID: applicationID, issuedAt: now, id: UUIDv4.random(), sign: sign))
        }
    }
}

/// Where Vonage Verify v2 is, the brand its messages name, and how calls authenticate.
public struct VonageVerifyAccount: Sendable {
    /// `https://api.nexmo.com` (a trailing slash is ignored); a fake's in tests.
    public var baseURL: String
    public var brand: String
    public var authentication: VonageAuthentication

    public init(baseURL: String, brand: String, authentication: VonageAuthentication) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.brand = brand
        self.authentication = authentication
    }
}

/// Vonage Verify v2 with `silent_auth` first in the workflow: create (`POST /v2/verify`, 202
/// `{request_id, check_url}`), the device opens `check_url` over the bearer as Vonage's SDK does
/// and the chain ends with `{request_id, code}` (or a `redirect_url` with them in its fragment),
/// then the code is checked (`POST /v2/verify/{request_id}` → `completed`). A chain that ends in
/// `user_rejected` means the number is not the SIM's. Errors are RFC 7807 problems.
public struct VonageVerifyClient: SilentAuthProvider {
    /// Vonage's device SDK: `x-silentauth-sdk-request: <uuid>`, at most 10 hops of 5 s, https
    /// only, the JSON `{request_id, code}` (or an error naming the request) at the end.
    public static let deviceLeg = DeviceLegRules(
        name: "vonage-silent-auth", headers: [HTTPHeader("x-silentauth-sdk-request", DeviceLegRules.requestID)],
        maxHops: 10, hopTimeout: .seconds(5), httpsOnly: true, ending: .requestIDAndCode, errorEndingIsVerdict: true)
    /// Lifetime of an application JWT, in seconds.
    static let tokenLifetime = 900

    public let account: VonageVerifyAccount
    /// Channels after silent_auth (at most two: a workflow has at most three steps).
    public let fallbacks: [VonageChannel]
    private let caller: BackendCaller

    public init(
        account: VonageVerifyAccount, fallbacks: [VonageChannel], http: HTTPClient, caFile: String?,
        timeout: Duration, retry: RetryPolicy = .default
    ) {
        self.init(
            account: account, fallbacks: fallbacks, transport: http, caFile: caFile, timeout: timeout, retry: retry)
    }

    init(
        account: VonageVerifyAccount, fallbacks: [VonageChannel], transport: any TruAPITransport, caFile: String?,
        timeout: Duration, retry: RetryPolicy
    ) {
        self.account = account
        self.fallbacks = fallbacks
        var caller = BackendCaller(
            http: transport, caFile: caFile, timeout: timeout, retry: retry, errorDescription: Self.problemText)
        caller.namedError = Self.namedError
        self.caller = caller
    }

    public var name: String { "Vonage Verify \(account.baseURL)" }
    public var deviceLeg: DeviceLegRules { Self.deviceLeg }

    public func create(phoneNumber: String, options: CheckOptions) async throws(CellpathError) -> CreatedCheckHandle {
        guard fallbacks.count <= 2 else {
            throw CellpathError(.usage, "Vonage takes at most 2 fallback channels after silent_auth")
        }
        // Vonage writes numbers in E.164 without the '+'.
        let to = phoneNumber.hasPrefix("+") ? String(phoneNumber.dropFirst()) : phoneNumber
        var silentAuth: [(String, JSONValue)] = [("channel", .string("silent_auth")), ("to", .string(to))]
        if let redirect = options.redirectURL { silentAuth.append(("redirect_url", .string(redirect))) }
        let workflow =
            [JSONValue.object(silentAuth)]
            + fallbacks.map { .object([("channel", .string($0.rawValue)), ("to", .string(to))]) }
        var body: [(String, JSONValue)] = [("brand", .string(account.brand)), ("workflow", .array(workflow))]
        if let reference = options.referenceID { body.append(("client_ref", .string(reference))) }
        let json = try await caller.call(
            "POST", url: account.baseURL + "/v2/verify", json: .object(body), headers: [authorization()],
            operation: "create the Vonage verification")
        guard let requestID = json[string: "request_id"], let checkURL = json[string: "check_url"] else {
            throw CellpathError(
                .protocolError, "Vonage's verification has no request_id and check_url",
                hint: "is silent authentication enabled for this account?")
        }
        guard checkURL.lowercased().hasPrefix("https://") else {
            throw CellpathError(.protocolError, "Vonage's check_url is not https: the device leg opens https only")
        }
        return CreatedCheckHandle(checkID: requestID, checkURL: checkURL)
    }

    public func complete(
        _ verification: CreatedCheckHandle, ending: CheckCallback?
    ) async throws(CellpathError)
        -> CheckVerdict
    {
        guard let ending else {
            throw CellpathError(.protocolError, "the check_url chain ended without Vonage's request_id and code")
        }
        guard ending.checkID == verification.checkID else {
            throw CellpathError(
                .protocolError, "the check_url chain ended with another request's id, not this verification's",
                hint: "the answer does not belong to this verification: do not trust it")
        }
        if let error = ending.error {
            if error == "expired" {
                throw CellpathError(
                    .dataError, "Vonage's verification expired before the device opened its check_url",
                    hint: "start a new verification and open its check_url at once")
            }
            guard error == "user_rejected" else {
                throw CellpathError(
                    .unavailable,
                    "Vonage's silent authentication \(error.terminalSafe)"
                        + (ending.errorDescription.map { ": \($0.terminalSafe)" } ?? ""))
            }
            return CheckVerdict(checkID: verification.checkID, status: error, match: false)
        }
        guard let code = ending.code else {
            throw CellpathError(.protocolError, "the check_url chain ended without Vonage's code")
        }
        let json = try await caller.call(
            "POST", url: account.baseURL + "/v2/verify/" + verification.checkID,
            json: .object([("code", .string(code))]), headers: [authorization()],
            operation: "check the Vonage code")
        let status = json[string: "status"]
        return CheckVerdict(
            checkID: json[string: "request_id"] ?? verification.checkID, status: status, match: status == "completed")
    }

    /// The `Authorization` header of a call.
    func authorization() -> HTTPHeader { account.authentication.header() }

    /// An application JWT: `{alg: RS256, typ: JWT}`, claims `{application_id, iat, exp, jti}`.
    static func applicationJWT(
        applicationID: String, issuedAt: Int, id: String, sign: ([UInt8]) -> [UInt8]
    ) -> String {
        let claims = JSONValue.object([
            ("application_id", .string(applicationID)), ("iat", .int(issuedAt)),
            ("exp", .int(issuedAt + tokenLifetime)), ("jti", .string(id))
        ])
        // The signer never fails: it returns bytes (empty when libcrypto fails, refused by the API).
        return CompactJWT.sign(claims: claims, algorithm: "RS256", with: sign)!
    }

    /// An RFC 7807 problem's `title: detail`.
    static func problemText(_ json: JSONValue?) -> String? {
        let parts = [json?[string: "title"], json?[string: "detail"]].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: ": ")
    }

    /// Vonage's own meanings of 401/403 (the application's credentials), of the create call's
    /// 409 and 422 and of the code check's 400/404/409/410; 429 and 5xx are left to the generic mapping.
    static func namedError(_ status: Int, _ json: JSONValue?, _ operation: String) -> CellpathError? {
        let said = problemText(json).map { " (\($0.terminalSafe))" } ?? ""
        let creating = operation.hasPrefix("create")
        switch (status, creating) {
        case (401, _), (403, _):
            return CellpathError(
                .configuration, "couldn't \(operation): Vonage refused the credentials (\(status))\(said)",
                hint:
                    "check [vonage] application_id and private_key (or api_key and api_secret), and that Verify is enabled for the application"
            )
        case (409, true):
            let id = json?[string: "request_id"].map { " (request_id \($0.terminalSafe))" } ?? ""
            return CellpathError(
                .temporary, "couldn't \(operation): a verification of this number is already in progress\(id)",
                hint: "wait for it to end (or cancel it) and verify again")
        case (422, true):
            return CellpathError(.dataError, "couldn't \(operation): Vonage refused the request's parameters\(said)")
        case (400, false):
            return CellpathError(.dataError, "couldn't \(operation): Vonage says the code is wrong\(said)")
        case (404, false):
            return CellpathError(
                .dataError, "couldn't \(operation): Vonage has no such request, or it is already done\(said)",
                hint: "start a new verification")
        case (409, false):
            return CellpathError(
                .dataError, "couldn't \(operation): the verification's current step takes no code\(said)")
        case (410, false):
            return CellpathError(
                .dataError, "couldn't \(operation): too many wrong codes: the verification is over\(said)",
                hint: "start a new verification")
        default:
            return nil
        }
    }
}
