import FuzzOracles

@testable import CellularHTTP

/// The redirect rules (`RedirectPolicy`) over the project's Location resolution (`CurlURL`), with
/// libcurl's URL API called directly as the reference. Input: a control byte (method, hop limit,
/// --strict), the first URL on the first line, then one redirect per line: a byte for the status
/// (301, 302, 303, 307, 308) and the Location.
///
/// Invariants: the project resolves a Location to exactly the URL curl_url gives (and refuses
/// what curl_url refuses), and an absolute path of plain characters as RFC 3986 says; a followed redirect is absolute http(s); 301/302 turn POST into GET,
/// 303 turns everything but HEAD into GET and drops the body, 307/308 keep both; credentials
/// (Authorization, Cookie) never leave the first origin; a plain-http hop to a host reached over
/// https is flagged as a downgrade (and refused under --strict); no chain is longer than its
/// hop limit, and a request repeated with the same method, URL, body and cookies is a loop.
enum RedirectTarget: FuzzTarget {
    static let name = "redirect"

    static func run(_ input: [UInt8]) {
        var input = FuzzInput(input)
        let control = input.byte()
        let strict = control & 1 != 0
        let method = ["GET", "POST", "HEAD", "PUT"][Int(control >> 1) & 3]
        let maxHops = Int(control >> 3 & 7) + 1
        let first = input.line()
        guard case .success(let start) = CurlURL.parse(first), start.scheme == "http" || start.scheme == "https" else {
            return
        }
        let body: [UInt8]? = method == "POST" || method == "PUT" ? Array("a=1".utf8) : nil
        var policy = RedirectPolicy(
            url: start, method: method, body: body,
            headers: [
                HTTPHeader("Authorization", "Bearer t"), HTTPHeader("Cookie", "c=1"), HTTPHeader("Accept", "*/*")
            ],
            firstRequestHeaders: [HTTPHeader("X-First", "1")],
            maxHops: maxHops, stopAtPrefix: "https://stop.example/", strict: strict,
            resolve: CurlURL.resolve)
        var httpsHosts: Set<String> = []
        var previous: ChainRequest?
        var requests = 0
        for line in input.remainingLines() {
            let statuses = [301, 302, 303, 307, 308]
            let status = statuses[Int(line.utf8.first ?? 0) % statuses.count]
            let location = String(line.dropFirst())
            let request: ChainRequest
            do {
                request = try policy.nextRequest()
            } catch {
                require(
                    error.reason == .downgradeRefused && strict,
                    "nextRequest failed with \(error.reason) (\(error.message))")
                return
            }
            requests += 1
            require(request.index == requests && requests <= maxHops, "request \(request.index) of at most \(maxHops)")
            check(request, after: previous, firstOrigin: start.origin, httpsHosts: httpsHosts)
            if let previous, previous.url.scheme == "https" { httpsHosts.insert(previous.url.host) }
            previous = request

            let expected = CurlURLOracle.resolve(location, against: request.url.text)
            switch CurlURL.resolve(location, against: request.url) {
            case .success(let url):
                require(
                    url.text == expected,
                    "resolved \(shown(location)) against \(shown(request.url.text)) to \(shown(url.text)), curl_url gives \(shown(expected ?? "an error"))"
                )
            case .failure:
                require(
                    expected == nil,
                    "refused \(shown(location)) against \(shown(request.url.text)); curl_url gives \(shown(expected ?? ""))"
                )
            }
            // And for the simplest Locations, RFC 3986 by hand: an absolute path of plain characters
            // replaces the base's path, query and fragment. Only against a base that curl_url leaves
            // as it is: curl normalises a host it decoded itself the next time it reads it
            // (`https:/%30` parses to `https://0/`, whose host then reads as 0.0.0.0).
            if location.hasPrefix("/"), !location.hasPrefix("//"), !location.contains("/."),
                CurlURLOracle.resolve(request.url.text, against: request.url.text) == request.url.text,
                location.utf8.allSatisfy({
                    $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "-") || (0x30 ... 0x39).contains($0)
                        || (0x61 ... 0x7A).contains($0)
                }),
                let colon = request.url.text.utf8.firstIndex(of: UInt8(ascii: ":"))
            {
                // In bytes: a combining mark after a '/' would hide it from a Character search.
                let base = Array(request.url.text.utf8)
                let authorityStart =
                    request.url.text.utf8.distance(from: request.url.text.utf8.startIndex, to: colon) + 3
                let end =
                    base[authorityStart...].firstIndex {
                        $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
                    } ?? base.endIndex
                let reference = String(decoding: base[..<end], as: UTF8.self) + location
                require(
                    expected == reference,
                    "\(shown(location)) against \(shown(request.url.text)) is \(shown(expected ?? "an error")) for curl_url"
                )
            }
            switch policy.decide(status: status, location: location, cookieJar: []) {
            case .final:
                require(false, "a \(status) with a Location ended the chain as final")
            case .stop(let target, _):
                require(
                    target.utf8.starts(with: "https://stop.example/".utf8)
                        || location.utf8.starts(with: "https://stop.example/".utf8),
                    "stopped at \(shown(target))")
                return
            case .refuse(let failure, _):
                require(
                    [.malformedURL, .nonHTTPScheme, .redirectLoop, .tooManyHops].contains(failure.reason),
                    "refused with \(failure.reason)")
                if failure.reason == .tooManyHops {
                    require(request.index >= maxHops, "too many hops after \(request.index) of \(maxHops)")
                }
                if failure.reason == .malformedURL, expected != nil, let url = try? parsed(expected!) {
                    require(url.scheme == "http" || url.scheme == "https", "a malformed-URL refusal of a non-http URL")
                }
                return
            case .follow(let target):
                require(
                    !target.utf8.starts(with: "https://stop.example/".utf8),
                    "followed \(shown(target)) past the stop prefix")
                require(
                    target == expected, "followed \(shown(target)), curl_url gives \(shown(expected ?? "an error"))")
                // Bytes, not characters: "http://" and a combining mark after it are not the Character "/".
                require(
                    target.utf8.starts(with: "http://".utf8) || target.utf8.starts(with: "https://".utf8),
                    "followed a redirect that is not absolute http(s): \(shown(target))")
            }
        }
    }

    /// The rules a request of the chain keeps, from the one before it.
    private static func check(
        _ request: ChainRequest, after previous: ChainRequest?, firstOrigin: String, httpsHosts: Set<String>
    ) {
        let names = Set(request.headers.map { $0.name.lowercased() })
        if request.url.origin != firstOrigin {
            require(
                !names.contains("authorization") && !names.contains("cookie"),
                "credentials sent to \(shown(request.url.origin))")
        }
        guard let previous else { return }
        require(!names.contains("x-first"), "a first-request header on request \(request.index)")
        var reached = httpsHosts
        if previous.url.scheme == "https" { reached.insert(previous.url.host) }
        if request.url.scheme == "http", reached.contains(request.url.host) {
            require(
                request.isDowngrade,
                "plain http to \(shown(request.url.host)) after https is not flagged as a downgrade")
        }
        if request.url.scheme == "https" { require(!request.isDowngrade, "an https request flagged as a downgrade") }
        // The status of the previous response is not kept: check what every status allows.
        switch (previous.method, request.method) {
        case (let a, let b) where a == b: break
        case (_, "GET"): require(request.body == nil, "a redirect turned into GET keeps its body")
        default: require(false, "\(previous.method) became \(request.method)")
        }
        if request.method == previous.method, request.body != nil {
            require(request.body == previous.body, "the body changed")
        }
    }

    private static func parsed(_ text: String) throws -> ParsedURL {
        switch CurlURL.parse(text) {
        case .success(let url): return url
        case .failure(let failure): throw failure
        }
    }
}
