import CellpathCore
import CellularHTTP

/// An RFC 7807 problem (`application/problem+json`, also sent as `application/json`) that a
/// check_url answered with: the tru.ID API's error `type` (its fragment is the error key, e.g.
/// `not_mobile_ip`), `title` and `detail`.
public struct Problem: Sendable, Equatable, Codable {
    public var type: String?
    public var title: String?
    public var status: Int?
    public var detail: String?

    /// The problem in a JSON body: an object with a string `title`, `detail` or `type`; nil otherwise.
    public init?(_ json: JSONValue?) {
        guard let json, json[string: "title"] != nil || json[string: "detail"] != nil || json[string: "type"] != nil
        else { return nil }
        type = json[string: "type"]
        title = json[string: "title"]
        status = json["status"]?.intValue
        detail = json[string: "detail"]
    }

    /// The error key: the type URI's fragment (`…/api-errors#not_mobile_ip` → `not_mobile_ip`).
    public var key: String? {
        guard let type, let hash = type.lastIndex(of: "#") else { return nil }
        return String(type[type.index(after: hash)...])
    }
}

/// What a check_url's final answer means when it is not a success: each status the tru.ID API
/// (and the servers in front of it) answers with, named.
public enum CheckURLAnswer: String, Sendable, Codable, CaseIterable {
    /// 400 `mno_not_supported`: the SIM's operator is not supported for this product.
    case mnoNotSupported
    /// Another 400: the request was malformed.
    case badRequest
    /// 404: no such check (a wrong check_url, or another project's).
    case checkNotFound
    /// 409: the check was already processed; a check_url opens once.
    case checkAlreadyProcessed
    /// 410: the check expired before its check_url was opened.
    case checkExpired
    /// 412 `not_mobile_ip`: the request did not come from a mobile network.
    case notMobileIP
    /// 429: too many requests.
    case rateLimited
    /// 501 `mno_redirect_unsupported`: the operator cannot run this check's redirect.
    case mnoRedirectUnsupported
    /// Another 5xx: the server failed.
    case serverError
    /// Any other final status that is not 2xx.
    case httpError
    /// A 2xx v0.2 callback `{check_id, error, error_description}`: the check failed at the operator.
    case checkFailed

    /// The answer a final `status` with `problem` means; nil for a success (2xx).
    init?(status: Int, problem: Problem?) {
        switch status {
        case 200 ..< 300: return nil
        case 400: self = problem?.key == "mno_not_supported" ? .mnoNotSupported : .badRequest
        case 404: self = .checkNotFound
        case 409: self = .checkAlreadyProcessed
        case 410: self = .checkExpired
        case 412: self = .notMobileIP
        case 429: self = .rateLimited
        case 501: self = .mnoRedirectUnsupported
        case 500 ..< 600: self = .serverError
        default: self = .httpError
        }
    }

    /// The category (and so the exit code): the operator or the path cannot do it (69), the
    /// check_url is wrong, used or expired (65), or retry later (75).
    public var kind: FailureKind {
        switch self {
        case .mnoNotSupported, .mnoRedirectUnsupported, .notMobileIP, .checkFailed: .unavailable
        case .badRequest, .checkNotFound, .checkAlreadyProcessed, .checkExpired, .httpError: .dataError
        case .rateLimited, .serverError: .temporary
        }
    }

    /// What happened, for the user.
    func message(status: Int) -> String {
        switch self {
        case .mnoNotSupported:
            "the SIM's mobile network operator is not supported for this check (400 mno_not_supported)"
        case .badRequest: "the server refused the request as malformed (400)"
        case .checkNotFound: "no such check (404): the check_url is wrong or belongs to another project"
        case .checkAlreadyProcessed: "the check was already processed (409): a check_url can be opened only once"
        case .checkExpired: "the check expired (410) before its check_url was opened"
        case .notMobileIP:
            "the request did not come from a mobile network (412 not_mobile_ip): the API saw an address that is not the operator's"
        case .rateLimited: "too many requests (429)"
        case .mnoRedirectUnsupported:
            "the operator does not support the redirect this check needs (501 mno_redirect_unsupported)"
        case .serverError: "the server failed (\(status))"
        case .httpError: "the chain ended with HTTP status \(status)"
        case .checkFailed: "the check failed at the operator"
        }
    }

    /// What to do about it.
    func hint(retryAfter: String?) -> String? {
        switch self {
        case .notMobileIP:
            "open the check_url over the SIM's mobile data: the bearer must be up and --interface must be the modem's interface (a VPN or proxy on the path also causes this)"
        case .checkAlreadyProcessed, .checkExpired: "create a new check and open its check_url at once"
        case .checkNotFound: "use the check_url exactly as the API returned it"
        case .mnoNotSupported, .mnoRedirectUnsupported:
            "this operator cannot run the check; the coverage API lists supported operators"
        case .rateLimited, .serverError:
            retryAfter.map { "retry after \($0) (the server's Retry-After)" } ?? "retry later"
        case .badRequest, .httpError, .checkFailed: nil
        }
    }
}

/// Why opening a check_url failed: the chain did not complete (`reason` is a
/// `FetchFailureReason`), or it completed with an answer that is not a success (`reason` is a
/// `CheckURLAnswer`, with the status and the problem the server sent).
public struct CheckURLFailure: Error, Sendable, Equatable, Codable {
    /// A `FetchFailureReason` or `CheckURLAnswer` raw value (docs/json.md lists them).
    public var reason: String
    public var kind: FailureKind
    public var message: String
    public var hint: String?
    /// 1-based hop the failure belongs to; nil before the first request.
    public var hop: Int?
    /// The final HTTP status, for an answer.
    public var status: Int?
    /// The problem+json body of the answer, if any.
    public var problem: Problem?
    /// The answer's Retry-After, as sent.
    public var retryAfter: String?

    /// The chain's own failure.
    init(_ failure: FetchFailure) {
        reason = failure.reason.rawValue
        kind = failure.reason.kind
        message = failure.message
        hint = failure.hint
        hop = failure.hop
    }

    /// A completed chain's final answer, when it is not a success: a non-2xx status, or a 2xx
    /// callback that carries an error. Nil for a success.
    init?(answer result: FetchResult, lastHop: HopTrace?, callback: CheckCallback?) {
        let problem = Problem(result.json)
        let answer: CheckURLAnswer
        if let callback, let error = callback.error {
            answer = .checkFailed
            message =
                answer.message(status: result.finalStatus) + ": " + error
                + (callback.errorDescription.map { " (\($0))" } ?? "")
        } else if result.stoppedAt == nil, let named = CheckURLAnswer(status: result.finalStatus, problem: problem) {
            answer = named
            message =
                answer.message(status: result.finalStatus)
                + ([problem?.title, problem?.detail].compactMap { $0 }.isEmpty
                    ? ""
                    : ": " + [problem?.title, problem?.detail].compactMap { $0 }.joined(separator: ": "))
        } else {
            return nil
        }
        retryAfter = lastHop?.responseHeaders.first { $0.name.lowercased() == "retry-after" }?.value
        reason = answer.rawValue
        kind = answer.kind
        hint = answer.hint(retryAfter: retryAfter)
        hop = lastHop?.index
        status = result.finalStatus
        self.problem = problem
    }

    public var cellpathError: CellpathError { CellpathError(kind, message, hint: hint) }
}
