/// The scenario's `providers` object: faults of the providers' fake OpenID operators, each
/// answered in its contract's shape (OAuth's errors at the redirect URI and the token endpoint,
/// CAMARA's `{status, code, message}` from the API).
public struct ProviderFaults: Sendable, Equatable, Encodable {
    /// The fake CAMARA operator (`operator.camara.test`).
    public var camara = OIDCFaults()
    /// The fake Vonage Number Verification (`api-eu.vonage.test`).
    public var vonageNV = OIDCFaults()
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case camara, vonageNV
    }
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
    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case authorizationError, wrongState, missingState, codeExpired, redirectElsewhere
        case notAuthenticatedByMobileNetwork
    }
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
        return faults
    }
}
