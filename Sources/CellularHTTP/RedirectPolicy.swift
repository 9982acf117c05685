/// One request of a redirect chain, as the redirect rules shape it.
struct ChainRequest: Sendable, Equatable {
    /// 1-based position in the chain.
    var index: Int
    var url: ParsedURL
    var method: String
    var body: [UInt8]?
    var headers: [HTTPHeader]
    /// Plain http to a host the chain already reached over https, or plain http carrying a
    /// credential (`Credentials`: a code, an assertion) after https. A plain-http hop to a new host
    /// (the carrier's header-enrichment leg) is not one.
    var isDowngrade: Bool
}

/// What a response means for the chain.
enum RedirectDecision: Sendable, Equatable {
    /// Not a redirect, or one without Location: the chain ends with this response.
    case final
    /// A redirect matching `stopAtPrefix` or `stopAt`: the chain ends without requesting it.
    case stop(location: String, stoppedAt: String)
    /// A redirect to follow: `RedirectPolicy.nextRequest()` returns the request.
    case follow(location: String)
    /// A redirect the rules refuse; `location` is the resolved target when there is one.
    case refuse(FetchFailure, location: String?)
}

/// The redirect rules of one chain, applied response by response: 301–308 method rules,
/// Location resolution, the hop limit, loops, https→http downgrades, where to stop and
/// which headers survive a change of origin. Pure: no I/O, no curl; URLs are resolved by the
/// injected `resolve`. A value confined to the chain that owns it.
struct RedirectPolicy {
    /// Resolves a Location header against the URL of the request that received it.
    typealias Resolve = (_ location: String, _ base: ParsedURL) -> Result<ParsedURL, FetchFailure>

    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
    /// Headers for the first origin only: dropped once the chain leaves it, and not restored.
    static let originBoundHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    let maxHops: Int
    let stopAtPrefix: String?
    /// Also stop at a redirect whose resolved target this returns true for.
    let stopAt: (@Sendable (String) -> Bool)?
    let strict: Bool
    private let resolve: Resolve
    private let firstOrigin: String
    /// Names (lowercased) of the headers that only the first request carries.
    private let firstRequestOnly: Set<String>
    /// The request to send next; nil once the chain ended or before a redirect was followed.
    private var pending: ChainRequest?
    /// The request whose response `decide` judges.
    private var current: ChainRequest?
    /// Method, URL, body and cookie jar of every redirected request so far.
    private var seen: Set<RequestState> = []
    /// Hosts the chain reached over https.
    private var httpsHosts: Set<String> = []

    /// A chain that starts with `method` on `url`, sending `headers` on every request (within
    /// the origin rules) and `firstRequestHeaders` on the first only; `maxHops` counts requests.
    init(
        url: ParsedURL, method: String, body: [UInt8]?, headers: [HTTPHeader], firstRequestHeaders: [HTTPHeader] = [],
        maxHops: Int, stopAtPrefix: String?, stopAt: (@Sendable (String) -> Bool)? = nil, strict: Bool,
        resolve: @escaping Resolve
    ) {
        self.maxHops = maxHops
        self.stopAtPrefix = stopAtPrefix
        self.stopAt = stopAt
        self.strict = strict
        self.resolve = resolve
        firstOrigin = url.origin
        firstRequestOnly = Set(firstRequestHeaders.map { $0.name.lowercased() })
        pending = ChainRequest(
            index: 1, url: url, method: method, body: body, headers: headers + firstRequestHeaders,
            isDowngrade: false)
    }

    /// 1-based index of the request `nextRequest()` returns.
    var nextIndex: Int { (current?.index ?? 0) + 1 }

    /// The next request to send; throws `downgradeRefused` when it is a downgrade under `strict`.
    /// Call once per request: first at the start, then after each `.follow`.
    mutating func nextRequest() throws(FetchFailure) -> ChainRequest {
        guard var request = pending else {
            throw FetchFailure(.internalError, "the chain has no next request", hop: nextIndex)
        }
        pending = nil
        let previousScheme = current?.url.scheme
        if let current, previousScheme == "https" { httpsHosts.insert(current.url.host) }
        if request.url.scheme == "http", !httpsHosts.isEmpty {
            let carriesCredential = Credentials.queryItems(of: request.url.text).contains {
                Credentials.isCredential($0.name)
            }
            request.isDowngrade = httpsHosts.contains(request.url.host) || carriesCredential
            if request.isDowngrade && strict {
                let why =
                    httpsHosts.contains(request.url.host)
                    ? "\(request.url.host) was reached over https before"
                    : "it would carry a credential (a code or an assertion) without TLS"
                throw FetchFailure(.downgradeRefused, "refused a downgrade to plain http: \(why)", hop: request.index)
            }
        }
        if request.url.origin != firstOrigin {
            request.headers.removeAll { Self.originBoundHeaders.contains($0.name.lowercased()) }
        }
        current = request
        return request
    }

    /// Judges the response to the last request: its `status`, its Location header and the
    /// chain's cookie jar after it (a redirect that sets a cookie is not a loop).
    mutating func decide(status: Int, location: String?, cookieJar: [String]) -> RedirectDecision {
        guard let request = current, Self.redirectStatuses.contains(status), let location else { return .final }
        let index = request.index
        let next: ParsedURL
        switch resolve(location, request.url) {
        case .success(let url): next = url
        case .failure(var failure):
            failure.hop = index
            return .refuse(failure, location: nil)
        }
        // Bytes, not characters: a combining mark after the prefix ("…/\u{301}") makes its last
        // Character another one, and String.hasPrefix would let the redirect through.
        if let prefix = stopAtPrefix,
            next.text.utf8.starts(with: prefix.utf8) || location.utf8.starts(with: prefix.utf8)
        {
            return .stop(
                location: next.text, stoppedAt: next.text.utf8.starts(with: prefix.utf8) ? next.text : location)
        }
        if let stopAt, stopAt(next.text) {
            return .stop(location: next.text, stoppedAt: next.text)
        }
        do throws(FetchFailure) {
            try next.requireHTTPScheme(hop: index)
            try next.requireDNSHostName(hop: index)
        } catch {
            return .refuse(error, location: next.text)
        }
        let state = RequestState(
            method: request.method, url: request.url.text, body: request.body, cookies: cookieJar.sorted())
        guard seen.insert(state).inserted else {
            let failure = FetchFailure(
                .redirectLoop,
                "redirect loop: \(redactedURL(request.url.text)) was requested twice with the same method, body and cookies",
                hop: index)
            return .refuse(failure, location: next.text)
        }

        var method = request.method
        var body = request.body
        switch status {
        case 303:
            if method != "HEAD" { method = "GET" }
            body = nil
        case 301 where method == "POST", 302 where method == "POST":
            method = "GET"
            body = nil
        default:
            break
        }
        var headers = request.headers
        headers.removeAll { firstRequestOnly.contains($0.name.lowercased()) }
        if body == nil { headers.removeAll { $0.name.lowercased() == "content-type" } }

        if index >= maxHops {
            let failure = FetchFailure(
                .tooManyHops, "the chain needs more than \(maxHops) requests", hint: "raise --max-hops", hop: index)
            return .refuse(failure, location: next.text)
        }
        pending = ChainRequest(
            index: index + 1, url: next, method: method, body: body, headers: headers, isDowngrade: false)
        return .follow(location: next.text)
    }

    /// What makes two requests the same for loop detection.
    private struct RequestState: Hashable {
        var method: String
        var url: String
        var body: [UInt8]?
        var cookies: [String]
    }
}
