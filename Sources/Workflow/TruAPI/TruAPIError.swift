import CellpathCore
import CellularHTTP

/// An error answer of the tru.ID API, kept whole so that a proxy can pass it on: its status,
/// the headers that matter to a caller, the body and its RFC 7807 problem, if any.
public struct UpstreamAnswer: Sendable, Equatable {
    public var status: Int
    /// `Content-Type`, `Retry-After` and `X-RateLimit-*` headers of the answer.
    public var headers: [HTTPHeader]
    public var body: [UInt8]
    public var problem: Problem?

    /// Names of the headers kept (lower case; `x-ratelimit-` is a prefix).
    static let keptHeaders = ["content-type", "retry-after"]

    init(_ response: HTTPClientResponse) {
        status = response.status
        headers = response.headers.filter {
            let name = $0.name.lowercased()
            return Self.keptHeaders.contains(name) || name.hasPrefix("x-ratelimit-")
        }
        body = response.body
        problem = Problem(response.json)
    }

    /// The last kept header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.last { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The `Retry-After` delay when it is a number of seconds.
    public var retryAfter: Duration? {
        header("retry-after").flatMap { Int($0.trimmingWhitespace) }.map { .seconds(max(0, $0)) }
    }
}

/// A failed call to the tru.ID API. Never carries the client secret or a token.
public enum TruAPIError: Error, Sendable, Equatable {
    /// The API answered with an error status (4xx/5xx).
    case upstream(UpstreamAnswer)
    /// The API answered 2xx with a body that is not what the contract says.
    case malformedAnswer(status: Int, reason: String)
    /// No answer: DNS, connect, TLS, timeout, reset.
    case transport(FetchFailure)
    /// The call could not be made as asked (an invalid base URL or argument).
    case invalidRequest(String)

    /// Whether a retry may succeed: 5xx but 501, 429, timeouts and resets.
    var isTransient: Bool {
        switch self {
        case .upstream(let answer): answer.status == 429 || (answer.status >= 500 && answer.status != 501)
        case .transport(let failure): failure.reason.kind == .temporary
        case .malformedAnswer, .invalidRequest: false
        }
    }

    /// The failure as the project's error, with the category the exit code follows:
    /// refused credentials → configuration, other 4xx → data error, 429/5xx/timeouts → temporary,
    /// unreachable → unavailable.
    public var cellpathError: CellpathError {
        switch self {
        case .upstream(let answer):
            let what = answer.problem.map { [$0.title, $0.detail].compactMap { $0 }.joined(separator: ": ") } ?? ""
            let message =
                "the tru.ID API answered \(answer.status)"
                + (what.isEmpty ? "" : " (\(String(what.prefix(200)).terminalSafe))")
            switch answer.status {
            case 401, 403:
                return CellpathError(
                    .configuration, message,
                    hint: "check the client ID and secret (truid.client_id, truid.client_secret) and the API base URL")
            case 429:
                let wait = answer.retryAfter.map { " after \($0.components.seconds) s" } ?? " later"
                return CellpathError(.temporary, message, hint: "rate limited: try again" + wait)
            case 500...:
                return CellpathError(.temporary, message, hint: "the API is failing; try again later")
            default:
                return CellpathError(.dataError, message)
            }
        case .malformedAnswer(let status, let reason):
            return CellpathError(.protocolError, "the tru.ID API answered \(status) with \(reason)")
        case .transport(let failure):
            return CellpathError(
                failure.reason.kind, "the tru.ID API cannot be reached: \(failure.message)", hint: failure.hint)
        case .invalidRequest(let reason):
            return CellpathError(.dataError, reason)
        }
    }
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    var trimmingWhitespace: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
