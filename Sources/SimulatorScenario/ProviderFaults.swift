/// The scenario's `providers` object: faults of the providers' fakes, each answered in its
/// contract's shape (OAuth's errors at the redirect URI and the token endpoint, CAMARA's
/// `{status, code, message}`, Twilio's SNA text ending and error JSON, Vonage's problems).
public struct ProviderFaults: Sendable, Equatable, Encodable {
    /// The fake CAMARA operator (`operator.camara.test`).
    public var camara = OIDCFaults()
    /// The fake Vonage network APIs (`api-eu.vonage.test`): Number Verification, CIBA, SIM Swap.
    public var vonageNV = OIDCFaults()
    /// The fake Twilio Verify SNA (`verify.twilio.test`).
    public var twilio = TwilioFaults()
    /// The fake Vonage Verify silent_auth (`api.vonage.test`).
    public var vonage = VonageVerifyFaults()
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case camara, vonageNV, twilio, vonage
    }
}

/// Faults of the fake Twilio Verify with the `sna` channel.
public struct TwilioFaults: Sendable, Equatable, Encodable {
    /// The SNA URL's text ends with this negative `ErrorCode` (-10, -30 to -34, -40) instead of
    /// the carrier's decision; the matching 605xx code is recorded on the verification.
    public var snaErrorCode: Int? = nil
    /// The SNA URL ends with `ErrorCode=0`, but the verification stays pending with this 605xx
    /// code (60510, 60533, 60534, 60540) in `sna_attempts_error_codes`.
    public var attemptErrorCode: Int? = nil
    /// VerificationCheck answers `expired`.
    public var expired: Bool = false
    /// Creating a verification answers 429 (60203).
    public var rateLimited: Bool = false
    public init() {}

    /// The negative codes Twilio's SNA URL may end with.
    public static let snaErrorCodes: Set = [-10, -30, -31, -32, -33, -34, -40]
    /// The 605xx codes of `sna_attempts_error_codes` other than 60500 (a mismatch).
    public static let attemptErrorCodes: Set = [60510, 60533, 60534, 60540]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case snaErrorCode, attemptErrorCode, expired, rateLimited
    }
}

/// Faults of the fake Vonage Verify v2 with the `silent_auth` channel.
public struct VonageVerifyFaults: Sendable, Equatable, Encodable {
    /// The check_url chain ends with `{request_id, error}` of this silent_auth status instead of
    /// the code.
    public var silentAuthStatus: SilentAuthFailure? = nil
    /// Creating answers 409: a verification of the number is already in progress.
    public var concurrent: Bool = false
    /// Creating answers 429.
    public var rateLimited: Bool = false
    /// The chain's ending names another request than the verification's.
    public var wrongRequestID: Bool = false
    /// The code check answers 409: the verification's current step takes no code.
    public var wrongState: Bool = false
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case silentAuthStatus, concurrent, rateLimited, wrongRequestID, wrongState
    }
}

/// How Vonage's silent authentication ends without a code.
public enum SilentAuthFailure: String, Sendable, Equatable, Encodable, CaseIterable {
    /// The network says the number is not the device's.
    case userRejected = "user_rejected"
    /// The carrier is not supported, or the request did not come from a mobile network.
    case failed
    /// The request expired before the device opened the check_url.
    case expired
}

/// Faults of an operator's authorization code flow and Number Verification.
public struct OIDCFaults: Sendable, Equatable, Encodable {
    /// The authorize page redirects to the redirect URI with this OAuth error instead of a code.
    public var authorizationError: OAuthErrorCode? = nil
    /// The redirect to the redirect URI carries another `state` than the request's.
    public var wrongState: Bool = false
    /// The redirect to the redirect URI carries no `state`.
    public var missingState: Bool = false
    /// Codes are expired when they come back: the token endpoint answers `invalid_grant`.
    public var codeExpired: Bool = false
    /// The authorize page redirects to another path than the registered redirect URI.
    public var redirectElsewhere: Bool = false
    /// `verify` answers 403 `NUMBER_VERIFICATION.USER_NOT_AUTHENTICATED_BY_MOBILE_NETWORK`
    /// (the operator does not support the device's network).
    public var notAuthenticatedByMobileNetwork: Bool = false
    /// CIBA's token request answers this error for every poll instead of a token.
    public var backchannelError: CIBAErrorCode? = nil
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case authorizationError, wrongState, missingState, codeExpired, redirectElsewhere
        case notAuthenticatedByMobileNetwork, backchannelError
    }
}

/// The errors of CIBA's token request in poll mode (OpenID CIBA Core 11).
public enum CIBAErrorCode: String, Sendable, Equatable, Encodable, CaseIterable {
    /// The subscriber has not authenticated yet.
    case authorizationPending = "authorization_pending"
    /// Pending, and the client polls too often.
    case slowDown = "slow_down"
    /// The `auth_req_id` expired.
    case expiredToken = "expired_token"
    /// The subscriber (or the operator) refused.
    case accessDenied = "access_denied"
}

/// The OAuth errors an authorize page may send back (RFC 6749 4.1.2.1, OpenID Connect 3.1.2.6).
public enum OAuthErrorCode: String, Sendable, Equatable, Encodable, CaseIterable {
    /// The user (or the operator, for a device it does not identify) rejected the request.
    case accessDenied = "access_denied"
    case consentRequired = "consent_required"
    case loginRequired = "login_required"
    case serverError = "server_error"
    case temporarilyUnavailable = "temporarily_unavailable"
}

extension ProviderFaults {
    static func read(_ o: ObjectReader) throws(ScenarioProblem) -> ProviderFaults {
        var faults = ProviderFaults()
        if let value = try o.object("camara", keys: keys(OIDCFaults.CodingKeys.self), OIDCFaults.read) {
            faults.camara = value
        }
        if let value = try o.object("vonageNV", keys: keys(OIDCFaults.CodingKeys.self), OIDCFaults.read) {
            faults.vonageNV = value
        }
        if let value = try o.object("twilio", keys: keys(TwilioFaults.CodingKeys.self), TwilioFaults.read) {
            faults.twilio = value
        }
        if let value = try o.object("vonage", keys: keys(VonageVerifyFaults.CodingKeys.self), VonageVerifyFaults.read) {
            faults.vonage = value
        }
        return faults
    }
}

extension TwilioFaults {
    static func read(_ o: ObjectReader) throws(ScenarioProblem) -> TwilioFaults {
        var faults = TwilioFaults()
        faults.snaErrorCode = try code(o, "snaErrorCode", among: snaErrorCodes)
        faults.attemptErrorCode = try code(o, "attemptErrorCode", among: attemptErrorCodes)
        if let value = try o.bool("expired") { faults.expired = value }
        if let value = try o.bool("rateLimited") { faults.rateLimited = value }
        return faults
    }

    /// An integer member that must be one of `codes`; nil when absent or null.
    private static func code(_ o: ObjectReader, _ key: String, among codes: Set<Int>) throws(ScenarioProblem) -> Int? {
        guard let value = try o.int(key, nullable: true) else { return nil }
        guard codes.contains(value) else {
            let allowed = codes.sorted().map(String.init).joined(separator: ", ")
            throw ScenarioProblem(field: o.field(key), problem: "must be one of \(allowed), got \(value)")
        }
        return value
    }
}

extension VonageVerifyFaults {
    static func read(_ o: ObjectReader) throws(ScenarioProblem) -> VonageVerifyFaults {
        var faults = VonageVerifyFaults()
        faults.silentAuthStatus = try o.choice("silentAuthStatus", SilentAuthFailure.self, nullable: true)
        if let value = try o.bool("concurrent") { faults.concurrent = value }
        if let value = try o.bool("rateLimited") { faults.rateLimited = value }
        if let value = try o.bool("wrongRequestID") { faults.wrongRequestID = value }
        if let value = try o.bool("wrongState") { faults.wrongState = value }
        return faults
    }
}

extension OIDCFaults {
    static func read(_ o: ObjectReader) throws(ScenarioProblem) -> OIDCFaults {
        var faults = OIDCFaults()
        faults.authorizationError = try o.choice("authorizationError", OAuthErrorCode.self, nullable: true)
        if let value = try o.bool("wrongState") { faults.wrongState = value }
        if let value = try o.bool("missingState") { faults.missingState = value }
        if let value = try o.bool("codeExpired") { faults.codeExpired = value }
        if let value = try o.bool("redirectElsewhere") { faults.redirectElsewhere = value }
        if let value = try o.bool("notAuthenticatedByMobileNetwork") { faults.notAuthenticatedByMobileNetwork = value }
        faults.backchannelError = try o.choice("backchannelError", CIBAErrorCode.self, nullable: true)
        return faults
    }
}
