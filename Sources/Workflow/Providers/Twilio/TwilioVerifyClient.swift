import CellpathCore
import CellularHTTP

/// Where Twilio Verify is and the account that calls it.
public struct TwilioVerifyAccount: Sendable {
    /// `https://verify.twilio.com` (a trailing slash is ignored); a fake's in tests.
    public var baseURL: String
    /// `AC…`: the user name of Basic authentication.
    public var accountSID: String
    public var authToken: String
    /// `VA…`: the Verify service the verifications belong to.
    public var serviceSID: String

    public init(baseURL: String, accountSID: String, authToken: String, serviceSID: String) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.accountSID = accountSID
        self.authToken = authToken
        self.serviceSID = serviceSID
    }
}

/// Twilio Verify v2 with the `sna` channel (Silent Network Auth): create a verification (form
/// `To`, `Channel=sna`, Basic AccountSid:AuthToken), the device opens its `sna.url` once over the
/// bearer and the chain ends with a text `ErrorCode=…`, then VerificationCheck says whether the
/// carrier matched the number (`approved`), with the SNA attempts' error codes.
public struct TwilioVerifyClient: SilentAuthProvider {
    /// Twilio's device leg: one https URL (the client refuses another), the carrier's redirects
    /// (its plain-http leg allowed, a downgrade refused as for tru.ID), a text answer at the end.
    /// Twilio documents no hop limit or header of its own: the command's and the configuration's apply.
    public static let deviceLeg = DeviceLegRules(name: "twilio-sna", httpsOnly: false, ending: .snaErrorCode)
    /// An SNA URL lives 10 minutes.
    public static let urlLifetime = 600

    public let account: TwilioVerifyAccount
    private let caller: BackendCaller

    public init(
        account: TwilioVerifyAccount, http: HTTPClient, caFile: String?, timeout: Duration,
        retry: RetryPolicy = .default
    ) {
        self.init(account: account, transport: http, caFile: caFile, timeout: timeout, retry: retry)
    }

    init(
        account: TwilioVerifyAccount, transport: any TruAPITransport, caFile: String?, timeout: Duration,
        retry: RetryPolicy
    ) {
        self.account = account
        var caller = BackendCaller(
            http: transport, caFile: caFile, timeout: timeout, retry: retry, errorDescription: Self.errorMessage)
        caller.namedError = Self.namedError
        self.caller = caller
    }

    public var name: String { "Twilio Verify \(account.baseURL)" }
    public var deviceLeg: DeviceLegRules { Self.deviceLeg }

    private var serviceURL: String { account.baseURL + "/v2/Services/" + account.serviceSID }

    private var authorization: HTTPHeader {
        let basic = Base64.encode("\(account.accountSID):\(account.authToken)".utf8)
        return HTTPHeader("Authorization", "Basic \(basic)")
    }

    public func create(phoneNumber: String, options: CheckOptions) async throws(CellpathError) -> CreatedCheckHandle {
        let json = try await caller.call(
            "POST", url: serviceURL + "/Verifications", form: [("To", phoneNumber), ("Channel", "sna")],
            headers: [authorization], operation: "create the Twilio verification")
        guard let sid = json[string: "sid"], let url = json["sna"]?[string: "url"] else {
            throw CellpathError(
                .protocolError, "Twilio's verification has no sid and sna.url",
                hint: "is the Verify service enabled for Silent Network Auth?")
        }
        guard url.lowercased().hasPrefix("https://") else {
            throw CellpathError(.protocolError, "Twilio's sna.url is not https: the device leg opens https only")
        }
        return CreatedCheckHandle(checkID: sid, checkURL: url, ttl: Self.urlLifetime)
    }

    public func complete(
        _ verification: CreatedCheckHandle, ending: CheckCallback?
    ) async throws(CellpathError)
        -> CheckVerdict
    {
        let json = try await caller.call(
            "POST", url: serviceURL + "/VerificationCheck", form: [("VerificationSid", verification.checkID)],
            headers: [authorization], operation: "check the Twilio verification")
        return try Self.verdict(json, sid: verification.checkID)
    }

    /// The verdict of a VerificationCheck answer: `approved` verified; `pending` with 60500 (the
    /// carrier's number differs) not verified; `expired` expired; any other status or SNA error
    /// is a failure naming the codes.
    static func verdict(_ json: JSONValue, sid: String) throws(CellpathError) -> CheckVerdict {
        let status = json[string: "status"] ?? ""
        let codes = snaErrorCodes(json)
        let listed = codes.isEmpty ? nil : codes.map(String.init).joined(separator: ",")
        var verdict = CheckVerdict(checkID: json[string: "sid"] ?? sid, status: status, errorCode: listed)
        switch status {
        case "approved":
            verdict.match = true
        case "pending" where codes.contains(60500):
            verdict.match = false
        case "expired":
            verdict.status = "EXPIRED"
        default:
            let named = codes.map { code in SNAAttemptError(code: code).map { "\(code) (\($0.meaning))" } ?? "\(code)" }
            throw CellpathError(
                codes.contains(where: { SNAAttemptError(code: $0) == .invalidNumber }) ? .dataError : .unavailable,
                "Twilio's verification is \(status.isEmpty ? "without a status" : status.terminalSafe)"
                    + (named.isEmpty ? "" : ": sna_attempts_error_codes \(named.joined(separator: ", "))"),
                hint: codes.contains(60510) ? "open sna.url over the SIM's mobile data, never Wi-Fi" : nil)
        }
        return verdict
    }

    /// The codes of `sna_attempts_error_codes` (items `{attempt_sid, code}` or bare numbers).
    static func snaErrorCodes(_ json: JSONValue) -> [Int] {
        guard case .array(let items)? = json["sna_attempts_error_codes"] else { return [] }
        return items.compactMap { $0["code"]?.intValue ?? $0.intValue }
    }

    /// Twilio's error JSON `{code, message, more_info, status}`: `message (code)`.
    static func errorMessage(_ json: JSONValue?) -> String? {
        guard let message = json?[string: "message"] else { return nil }
        return json?["code"]?.intValue.map { "\(message) (\($0))" } ?? message
    }

    /// Twilio's own meanings: 401/403 are the account's credentials; 404 (20404) is a
    /// verification that is gone; 429 (60203 and others) is left to the generic mapping.
    static func namedError(_ status: Int, _ json: JSONValue?, _ operation: String) -> CellpathError? {
        if status == 401 || status == 403 {
            return CellpathError(
                .configuration,
                "couldn't \(operation): Twilio refused the credentials (\(status)\(errorMessage(json).map { ": \($0.terminalSafe)" } ?? ""))",
                hint: "check [twilio] account_sid and auth_token")
        }
        guard status == 404 else { return nil }
        let code = json?["code"]?.intValue
        return CellpathError(
            .dataError,
            "couldn't \(operation): Twilio has no such verification (404\(code.map { ", \($0)" } ?? "")): "
                + "it was approved, expired or ran out of attempts, or the service SID is wrong",
            hint: "start a new verification; check [twilio] service_sid")
    }
}

/// The 605xx codes Twilio lists in `sna_attempts_error_codes`.
public enum SNAAttemptError: Int, Sendable {
    case mismatch = 60500
    case snaError = 60510
    case noCarrierHeader = 60533
    case carrierError = 60534
    case invalidNumber = 60540

    public init?(code: Int) { self.init(rawValue: code) }

    public var meaning: String {
        switch self {
        case .mismatch: "the carrier's number is not the one verified"
        case .snaError: "SNA failed on the device (e.g. over Wi-Fi)"
        case .noCarrierHeader: "the carrier sent no subscriber header"
        case .carrierError: "the carrier failed"
        case .invalidNumber: "invalid number"
        }
    }
}
