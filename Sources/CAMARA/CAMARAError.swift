import CellpathCore
import CellularHTTP

/// A failed CAMARA call or OIDC step. Never carries a token, a code, a key or a phone number.
public enum CAMARAError: Error, Sendable, Equatable {
    /// An API or token endpoint answered with an error status; `code` is CAMARA's `code` (e.g.
    /// `IDENTIFIER_NOT_FOUND`) or OAuth's `error` (e.g. `invalid_client`).
    case api(status: Int, code: String?, message: String?)
    /// The authorization server ended the device leg with OAuth's `error` (access_denied,
    /// consent_required, …) in the redirect URI's query.
    case authorizationRefused(error: String, description: String?)
    /// The device leg came back with another `state` than the one sent.
    case stateMismatch
    /// The device leg did not end at the redirect URI: the chain failed, or ended elsewhere.
    case deviceLeg(CellpathError)
    /// A 2xx answer whose body is not what the contract says.
    case malformedAnswer(status: Int, reason: String)
    /// No answer: DNS, connect, TLS, timeout, reset.
    case transport(FetchFailure)
    /// The call could not be made as asked (a bad argument or setting).
    case invalidRequest(String)

    /// CAMARA's code for a device that the operator did not identify on its mobile network.
    public static let notAuthenticatedByMobileNetwork = "NUMBER_VERIFICATION.USER_NOT_AUTHENTICATED_BY_MOBILE_NETWORK"

    /// The failure as the project's error, its credentials hint naming `endpoint`'s profile:
    /// refused credentials or scopes → configuration, a device not on the operator's network or
    /// a subscriber who refused → unavailable, bad input, an unknown number, an expired or used
    /// code → data error, 429/5xx/timeouts and a CIBA authentication still pending → temporary.
    public func cellpathError(of endpoint: CAMARAEndpoint) -> CellpathError {
        switch self {
        case .api(let status, let code, let message):
            let what = [code, message].compactMap { $0 }.joined(separator: ": ")
            let text =
                "the operator answered \(status)" + (what.isEmpty ? "" : " (\(String(what.prefix(200)).terminalSafe))")
            switch (status, code) {
            case (403, .some(Self.notAuthenticatedByMobileNetwork)):
                return CellpathError(
                    .unavailable, text, hint: "the device must reach the operator over its own mobile network")
            case (400, "invalid_grant"?), (400, "expired_token"?):
                return CellpathError(
                    .dataError, text + ": the code or the authentication expired, or was used already",
                    hint: "start a new verification")
            case (400, "authorization_pending"?), (400, "slow_down"?):
                return CellpathError(
                    .temporary, text + ": the subscriber's authentication did not complete in time",
                    hint: "try again later")
            case (_, "access_denied"?):
                return CellpathError(
                    .unavailable, text + ": the subscriber or the operator refused the authentication")
            case (401, _), (403, _), (400, "invalid_client"?), (400, "unauthorized_client"?):
                return CellpathError(.configuration, text, hint: endpoint.authentication.credentialsHint)
            case (429, _), (500..., _):
                return CellpathError(.temporary, text, hint: "try again later")
            default:
                return CellpathError(.dataError, text)
            }
        case .authorizationRefused(let error, let description):
            let text =
                "the operator refused the authorization: \(String(error.prefix(60)).terminalSafe)"
                + (description.map { " (\(String($0.prefix(200)).terminalSafe))" } ?? "")
            switch error {
            case "invalid_request", "unauthorized_client", "invalid_scope", "unsupported_response_type":
                return CellpathError(
                    .configuration, text, hint: endpoint.authentication.credentialsHint + " and the redirect URI")
            case "temporarily_unavailable", "server_error":
                return CellpathError(.temporary, text, hint: "try again later")
            default:
                return CellpathError(
                    .unavailable, text,
                    hint: "the operator authenticates the device by its mobile network: open the URL over the bearer")
            }
        case .stateMismatch:
            return CellpathError(
                .protocolError, "the authorization answer carries another state than the one sent; refused")
        case .deviceLeg(let error):
            return error
        case .malformedAnswer(let status, let reason):
            return CellpathError(.protocolError, "the operator answered \(status) with \(reason)")
        case .transport(let failure):
            return CellpathError(
                failure.reason.kind, "the operator cannot be reached: \(failure.message)", hint: failure.hint)
        case .invalidRequest(let reason):
            return CellpathError(.dataError, reason)
        }
    }

    /// The error of an error answer: CAMARA's `{status, code, message}` or OAuth's
    /// `{error, error_description}`.
    init(_ response: HTTPClientResponse) {
        let json = response.bodyTruncated ? nil : JSONValue.parse(response.body)
        self = .api(
            status: response.status, code: json?[string: "code"] ?? json?[string: "error"],
            message: json?[string: "message"] ?? json?[string: "error_description"])
    }
}
