import CellpathCore

/// `url` with its password (`user:…@`) and the values of its credential query and fragment
/// parameters (`Credentials`) masked.
func redactedURL(_ url: String, _ disclosure: Disclosure = .redacted) -> String {
    guard disclosure != .full else { return url }
    var out = ""
    var i = url.startIndex
    let schemeEnd = url.prefix { $0 != "/" && $0 != "?" && $0 != "#" }.endIndex
    if url[..<schemeEnd].hasSuffix(":"), url[schemeEnd...].hasPrefix("//") {
        let authorityStart = url.index(schemeEnd, offsetBy: 2)
        let authorityEnd = url[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        let authority = url[authorityStart ..< authorityEnd]
        out += url[..<authorityStart]
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            out +=
                authority[..<colon] + ":"
                + disclosure.reveal(String(authority[authority.index(after: colon) ..< at]), as: .secret)
            out += authority[at...]
        } else {
            out += authority
        }
        i = authorityEnd
    }
    var inParams = false
    while i < url.endIndex {
        let c = url[i]
        out.append(c)
        i = url.index(after: i)
        if c == "?" || c == "#" { inParams = true }
        guard inParams, c == "?" || c == "#" || c == "&" else { continue }
        // A '?' inside the query also ends a pair, as `Credentials.queryItems` reads it ("?next=/a?code=…").
        let end = url[i...].firstIndex { $0 == "&" || $0 == "#" || $0 == "?" } ?? url.endIndex
        let pair = url[i ..< end]
        if let eq = pair.firstIndex(of: "="), Credentials.isCredential(String(pair[..<eq])) {
            out += pair[...eq] + disclosure.reveal(String(pair[pair.index(after: eq)...]), as: .code)
        } else {
            out += pair
        }
        i = end
    }
    return out
}

/// A header with secrets masked: Authorization keeps its scheme, cookies keep their names.
func redactedHeader(_ h: HTTPHeader, _ disclosure: Disclosure) -> HTTPHeader {
    guard disclosure != .full else { return h }
    switch h.name.lowercased() {
    case "authorization", "proxy-authorization":
        let scheme = h.value.split(separator: " ").first.map(String.init) ?? ""
        return HTTPHeader(
            h.name,
            h.value.contains(" ")
                ? "\(scheme) \(disclosure.reveal(h.value, as: .token))" : disclosure.reveal(h.value, as: .token))
    case "cookie":
        let parts = h.value.split(separator: ";").map { part -> String in
            let p = part.drop { $0 == " " }
            guard let eq = p.firstIndex(of: "=") else { return String(p) }
            return "\(p[..<eq])=\(disclosure.reveal(String(p[p.index(after: eq)...]), as: .cookie))"
        }
        return HTTPHeader(h.name, parts.joined(separator: "; "))
    case "set-cookie":
        let first = h.value.prefix { $0 != ";" }
        let rest = h.value.dropFirst(first.count)
        guard let eq = first.firstIndex(of: "=") else { return h }
        return HTTPHeader(
            h.name, "\(first[..<eq])=\(disclosure.reveal(String(first[first.index(after: eq)...]), as: .cookie))\(rest)"
        )
    case "location", "content-location", "referer", "refresh":
        return HTTPHeader(h.name, redactedURL(h.value, disclosure))
    default:
        return Credentials.isCredential(h.name) ? HTTPHeader(h.name, disclosure.reveal(h.value, as: .secret)) : h
    }
}

extension JSONValue {
    /// The value with everything under a secret key masked, recursively.
    func redacted(_ disclosure: Disclosure) -> JSONValue {
        guard disclosure != .full else { return self }
        switch self {
        case .object(let members):
            return .object(
                members.map { key, value in
                    (key, Credentials.isCredential(key) ? value.masked(disclosure) : value.redacted(disclosure))
                })
        case .array(let a): return .array(a.map { $0.redacted(disclosure) })
        default: return self
        }
    }

    /// The value of a secret key: every string, number and boolean in it masked, also inside
    /// arrays and objects (`"tokens": ["…"]`).
    private func masked(_ disclosure: Disclosure) -> JSONValue {
        switch self {
        case .string(let text): .string(disclosure.reveal(text, as: .code))
        case .int, .double, .bool: .string(disclosure.reveal(serialized, as: .code))
        case .array(let items): .array(items.map { $0.masked(disclosure) })
        case .object(let members): .object(members.map { ($0.0, $0.1.masked(disclosure)) })
        case .null: .null
        }
    }
}

extension FetchReport {
    /// A copy safe to print or store: tokens, codes and cookies masked unless `.full`.
    public func redacted(_ disclosure: Disclosure) -> FetchReport {
        guard disclosure != .full else { return self }
        var copy = self
        copy.hops = hops.map { hop in
            var h = hop
            h.url = redactedURL(h.url, disclosure)
            h.location = h.location.map { redactedURL($0, disclosure) }
            h.requestHeaders = h.requestHeaders.map { redactedHeader($0, disclosure) }
            h.responseHeaders = h.responseHeaders.map { redactedHeader($0, disclosure) }
            return h
        }
        if var r = result {
            r.finalURL = redactedURL(r.finalURL, disclosure)
            r.stoppedAt = r.stoppedAt.map { redactedURL($0, disclosure) }
            if let json = r.json {
                r.json = json.redacted(disclosure)
                r.finalBody = r.json?.serialized ?? r.finalBody
            }
            copy.result = r
        }
        return copy
    }

    /// JSON of the (already redacted) report, keys sorted.
    public func jsonData(pretty: Bool = true) -> [UInt8] {
        let format: JSONFormat =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return (try? JSONEncoding.encode(self, format: format)) ?? []
    }

    /// Human-readable lines: one per hop (unless `hops` is false), then the result (a failure is
    /// the caller's to report). Redacts per `disclosure`.
    public func humanLines(_ disclosure: Disclosure, hops showHops: Bool = true) -> [String] {
        let r = redacted(disclosure)
        var lines = showHops ? hopLines(disclosure) : []
        if let result = r.result {
            var line =
                "[fetch] \(result.finalStatus) after \(r.hops.count) hop\(r.hops.count == 1 ? "" : "s") in \(formatMs(r.totalMs)) via \(r.interfaceName)"
            if let stop = result.stoppedAt { line += "; stopped at \(stop)" }
            lines.append(line)
        }
        return lines
    }

    /// One line per hop: request, answer, addresses, connection, TLS, downgrade, time. Redacts per `disclosure`.
    public func hopLines(_ disclosure: Disclosure) -> [String] {
        var lines: [String] = []
        var sawHTTPS = false
        for hop in redacted(disclosure).hops {
            var line =
                "[hop \(hop.index)] \(hop.method) \(hop.url) → \(hop.status == 0 ? "no response" : String(hop.status))"
            if let location = hop.location { line += " → \(location)" }
            line +=
                hop.remoteAddress.isEmpty
                ? " (no connection"
                : " (\(hop.localAddress):\(hop.localPort) → \(hop.remoteAddress):\(hop.remotePort)"
            line += hop.connectionReused ? ", reused" : ", new"
            if let tls = hop.tlsVersion { line += ", \(tls)" }
            if hop.downgrade {
                line += ", DOWNGRADE to plain http"
            } else if sawHTTPS, hop.url.hasPrefix("http:") {
                line += ", plain http: carrier leg"
            }
            sawHTTPS = sawHTTPS || hop.url.hasPrefix("https:")
            line += ", \(formatMs(hop.timings.totalMs)))"
            lines.append(line)
        }
        return lines
    }
}

/// `12.3 ms`.
func formatMs(_ ms: Double) -> String {
    let tenths = (ms * 10).rounded() / 10
    return "\(tenths) ms"
}
