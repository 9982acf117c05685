import CCurl
import CellpathCore
import Glibc

/// Runs one redirect chain on one curl easy handle. Blocking: call `run()` on a dedicated
/// thread, never on Swift's cooperative pool.
final class ChainRunner {
    private let path: CellularPath
    private let request: FetchRequest
    private let context: TransferContext
    private let share: CurlShare
    private let resolver: PinnedResolver
    private let started = ContinuousClock.now
    private var hops: [HopTrace] = []
    /// DNS answers of the chain, by host.
    private var dnsCache: [String: [String]] = [:]
    /// `host:port` entries already pinned with CURLOPT_RESOLVE.
    private var pinned: Set<String> = []
    /// TLS version of each origin's connection, for hops that reuse it.
    private var tlsByOrigin: [String: String] = [:]
    /// CURLOPT_RESOLVE lists handed to curl, freed with the runner.
    private var resolveLists: [UnsafeMutablePointer<curl_slist>?] = []

    init(path: CellularPath, request: FetchRequest, context: TransferContext, share: CurlShare) {
        self.path = path
        self.request = request
        self.context = context
        self.share = share
        self.resolver = PinnedResolver(servers: path.dnsServers, context: context)
    }

    deinit { resolveLists.forEach { curl_slist_free_all($0) } }

    /// Runs the chain to its end and reports every hop; never throws.
    func run() -> FetchReport {
        var result: FetchResult?
        var failure: FetchFailure?
        do throws(FetchFailure) {
            result = try chain()
        } catch {
            failure = error
        }
        let finished = ContinuousClock.now
        context.closeConnections()
        let (v4, v6) = path.bindAddresses(for: request.ipType)
        return FetchReport(interfaceName: path.interfaceName, localAddresses: [v4, v6].compactMap { $0 },
                           dnsServers: path.dnsServers, hops: hops, result: result, failure: failure,
                           totalMs: milliseconds(finished - started))
    }

    // MARK: the chain

    private func chain() throws(FetchFailure) -> FetchResult {
        try request.validate()
        var url = try CurlURL.parse(request.url).get()
        try path.verify(for: request.ipType, hop: nil)
        let firstOrigin = url.origin

        guard let easy = curl_easy_init() else { throw FetchFailure(.internalError, "couldn't create a curl handle") }
        defer { curl_easy_cleanup(easy) }
        try configure(easy)

        var method = request.method.uppercased()
        var body = request.body
        var headers = request.headers
        var seen: Set<String> = []
        var previousScheme = url.scheme
        var httpsHosts: Set<String> = []

        for index in 1... {
            if context.isCancelled { throw FetchFailure(.cancelled, "cancelled", hop: index) }
            // Plain http right after https, or to a host this chain already reached over https.
            let downgrade = url.scheme == "http" && (previousScheme == "https" || httpsHosts.contains(url.host))
            if downgrade && request.strict {
                throw FetchFailure(.downgradeRefused, "refused an https→http downgrade to \(url.host) (strict)", hop: index)
            }
            if url.origin != firstOrigin {
                headers.removeAll { ["authorization", "proxy-authorization", "cookie"].contains($0.name.lowercased()) }
            }
            let hop = try perform(easy, url: url, method: method, body: body, headers: headers, index: index, downgrade: downgrade)
            hops.append(hop)

            let redirect = [301, 302, 303, 307, 308].contains(hop.status)
            guard redirect, let location = context.headers.last(where: { $0.name.lowercased() == "location" })?.value else {
                return finalResult(hop: hop, url: url, stoppedAt: nil)
            }
            let next = try url.resolving(location).mapError { var e = $0; e.hop = index; return e }.get()
            hops[hops.count - 1].location = next.text
            if let prefix = request.stopAtPrefix, next.text.hasPrefix(prefix) || location.hasPrefix(prefix) {
                return finalResult(hop: hops[hops.count - 1], url: url, stoppedAt: next.text.hasPrefix(prefix) ? next.text : location)
            }
            try checkScheme(next, hop: index)
            let key = stateKey(easy, method: method, url: hop.url, body: body)
            if seen.contains(key) {
                throw FetchFailure(.redirectLoop, "redirect loop: \(redactedURL(hop.url)) was requested twice with the same method, body and cookies",
                                   hop: index)
            }
            seen.insert(key)

            switch hop.status {
            case 303:
                if method != "HEAD" { method = "GET" }
                body = nil
            case 301 where method == "POST", 302 where method == "POST":
                method = "GET"
                body = nil
            default:
                break
            }
            if body == nil { headers.removeAll { $0.name.lowercased() == "content-type" } }

            if index >= request.maxHops {
                throw FetchFailure(.tooManyHops, "the chain needs more than \(request.maxHops) requests", hint: "raise --max-hops", hop: index)
            }
            previousScheme = url.scheme
            if url.scheme == "https" { httpsHosts.insert(url.host) }
            url = next
        }
        throw FetchFailure(.internalError, "unreachable")
    }

    private func checkScheme(_ url: CurlURL, hop: Int?) throws(FetchFailure) {
        try FetchRequest.checkScheme(url, hop: hop)
    }

    /// Identifies a request state: same method, URL, body and cookie jar twice means a loop.
    private func stateKey(_ easy: UnsafeMutableRawPointer, method: String, url: String, body: [UInt8]?) -> String {
        var cookies: UnsafeMutablePointer<curl_slist>?
        cp_curl_getinfo_slist(easy, CURLINFO_COOKIELIST, &cookies)
        var jar: [String] = []
        var p = cookies
        while let node = p {
            if let d = node.pointee.data { jar.append(String(cString: d)) }
            p = node.pointee.next
        }
        curl_slist_free_all(cookies)
        return "\(method) \(url) \(body?.count ?? -1) \(body.map { String(decoding: $0, as: UTF8.self) } ?? "") \(jar.sorted())"
    }

    // MARK: one hop

    private func configure(_ easy: UnsafeMutableRawPointer) throws(FetchFailure) {
        let ctx = context.unmanaged
        var ok = true
        func check(_ rc: CURLcode) { if rc != CURLE_OK { ok = false } }
        check(cp_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(cp_curl_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        check(cp_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0))
        check(cp_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        check(cp_curl_setopt_sockopt(easy, curlSockoptCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_SOCKOPTDATA, ctx))
        check(cp_curl_setopt_closesocket(easy, curlCloseSocketCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, UnsafeMutableRawPointer(context.closingSockets)))
        check(cp_curl_setopt_resolver_start(easy, curlResolverStartCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_RESOLVER_START_DATA, ctx))
        check(cp_curl_setopt_write(easy, curlWriteCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, ctx))
        check(cp_curl_setopt_header(easy, curlHeaderCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, ctx))
        check(cp_curl_setopt_xferinfo(easy, curlXferinfoCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_XFERINFODATA, ctx))
        check(cp_curl_setopt_long(easy, CURLOPT_NOPROGRESS, 0))
        check(cp_curl_setopt_debug(easy, curlDebugCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_DEBUGDATA, ctx))
        check(cp_curl_setopt_long(easy, CURLOPT_VERBOSE, 1))
        check(cp_curl_setopt_string(easy, CURLOPT_COOKIEFILE, ""))
        check(cp_curl_setopt_string(easy, CURLOPT_USERAGENT, CellpathVersion.userAgent))
        check(cp_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1))
        check(cp_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
        check(cp_curl_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
        check(cp_curl_setopt_long(easy, CURLOPT_TCP_NODELAY, 1))
        let resolve: Int32 = switch request.ipType {
        case .ipv4: CURL_IPRESOLVE_V4
        case .ipv6: CURL_IPRESOLVE_V6
        case .any: CURL_IPRESOLVE_WHATEVER
        }
        check(cp_curl_setopt_long(easy, CURLOPT_IPRESOLVE, Int(resolve)))
        if let ca = request.caFile { check(cp_curl_setopt_string(easy, CURLOPT_CAINFO, ca)) }
        if let s = share.handle { check(cp_curl_setopt_share(easy, s)) }
        guard ok else { throw FetchFailure(.internalError, "couldn't configure libcurl") }
    }

    private func perform(_ easy: UnsafeMutableRawPointer, url: CurlURL, method: String, body: [UInt8]?,
                         headers: [HTTPHeader], index: Int, downgrade: Bool) throws(FetchFailure) -> HopTrace {
        let hopStart = ContinuousClock.now
        let wallStart = wallClock()
        let hopBudget = request.hopTimeout
        let totalLeft = request.totalTimeout - (hopStart - started)
        if totalLeft <= .zero { throw FetchFailure(.totalTimeout, "the chain took longer than \(seconds(request.totalTimeout))", hop: index) }
        let totalBound = totalLeft < hopBudget
        let budget = min(hopBudget, totalLeft)

        try path.verify(for: request.ipType, hop: index)
        context.resetHop()
        context.bodyCap = request.maxBodyBytes

        // DNS through the cellular path, cached for the chain, pinned for curl.
        let host = url.host
        var answers: [String]?
        var dnsMs = 0.0
        let literal = isAddressLiteral(host)
        if literal, (request.ipType == .ipv4 && host.contains(":")) || (request.ipType == .ipv6 && !host.contains(":")) {
            throw FetchFailure(.noAddress, "\(host) is not an \(request.ipType == .ipv4 ? "IPv4" : "IPv6") address (ip type \(request.ipType.rawValue))", hop: index)
        }
        context.allowCurlResolve = literal
        if !literal {
            if let cached = dnsCache[host] {
                answers = cached
            } else {
                let t0 = ContinuousClock.now
                // Ask only for families the path can bind: a v6 answer on a v4-only bearer would abort the hop.
                let family: IPType = request.ipType != .any ? request.ipType
                    : path.ipv4Address == nil ? .ipv6 : path.ipv6Address == nil ? .ipv4 : .any
                let found = try resolver.resolve(host, ipType: family, budgetMs: max(1, Int(milliseconds(budget))),
                                                 totalBound: totalBound, hop: index)
                dnsMs = milliseconds(ContinuousClock.now - t0)
                dnsCache[host] = found
                answers = found
            }
            let key = "\(host):\(url.port)"
            if !pinned.contains(key), let answers {
                let entry = "\(key):\(answers.map { $0.contains(":") ? "[\($0)]" : $0 }.joined(separator: ","))"
                // curl reads this list at the next perform: keep it until the chain ends.
                let list = curl_slist_append(nil, entry)
                resolveLists.append(list)
                cp_curl_setopt_slist(easy, CURLOPT_RESOLVE, list)
                pinned.insert(key)
            }
        }

        // Method, body, headers, deadline.
        cp_curl_setopt_string(easy, CURLOPT_URL, url.text)
        cp_curl_setopt_string(easy, CURLOPT_CUSTOMREQUEST, nil)
        cp_curl_setopt_long(easy, CURLOPT_NOBODY, 0)
        cp_curl_setopt_long(easy, CURLOPT_HTTPGET, 1)
        if method == "HEAD" {
            cp_curl_setopt_long(easy, CURLOPT_NOBODY, 1)
        } else if let body {
            cp_curl_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            body.withUnsafeBytes { raw in
                _ = cp_curl_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            }
            if method != "POST" { cp_curl_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method) }
        } else if method != "GET" {
            cp_curl_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method)
        }
        var list: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Expect:")
        for h in headers { list = curl_slist_append(list, "\(h.name): \(h.value)") }
        if request.sendOperatorHeader, let ops = path.operatorID { list = curl_slist_append(list, "x-tru-ops: \(ops)") }
        defer { curl_slist_free_all(list) }
        cp_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, list)
        let left = budget - (ContinuousClock.now - hopStart)
        let leftMs = max(1, Int(milliseconds(left)))
        cp_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, leftMs)
        cp_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, leftMs)

        let rc = transfer(easy)
        let trace = collect(easy, url: url, method: method, index: index, downgrade: downgrade, answers: answers,
                            dnsMs: dnsMs, wallStart: wallStart, hopStart: hopStart)
        if rc != CURLE_OK {
            hops.append(trace)
            throw failure(rc, easy, url: url, index: index, budget: budget, totalBound: totalBound)
        }
        return trace
    }

    /// Runs one transfer on the chain's multi handle (connections stay cached there between
    /// hops); returns early with CURLE_ABORTED_BY_CALLBACK when the chain is cancelled.
    private func transfer(_ easy: UnsafeMutableRawPointer) -> CURLcode {
        guard let multi = context.multi, curl_multi_add_handle(multi, easy) == CURLM_OK else { return CURLE_FAILED_INIT }
        defer { curl_multi_remove_handle(multi, easy) }
        var running: Int32 = 1
        while true {
            guard curl_multi_perform(multi, &running) == CURLM_OK else { return CURLE_FAILED_INIT }
            if running == 0 { break }
            if context.isCancelled { return CURLE_ABORTED_BY_CALLBACK }
            guard curl_multi_poll(multi, nil, 0, 1000, nil) == CURLM_OK else { return CURLE_FAILED_INIT }
        }
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
        }
        return CURLE_FAILED_INIT
    }

    private func collect(_ easy: UnsafeMutableRawPointer, url: CurlURL, method: String, index: Int, downgrade: Bool,
                         answers: [String]?, dnsMs: Double, wallStart: Double, hopStart: ContinuousClock.Instant) -> HopTrace {
        func long(_ i: CURLINFO) -> Int { var v = 0; cp_curl_getinfo_long(easy, i, &v); return v }
        func micros(_ i: CURLINFO) -> Double { var v: curl_off_t = 0; cp_curl_getinfo_offset(easy, i, &v); return Double(v) / 1000 }
        func string(_ i: CURLINFO) -> String {
            var p: UnsafeMutablePointer<CChar>?
            cp_curl_getinfo_string(easy, i, &p)
            return p.map { String(cString: $0) } ?? ""
        }
        let reused = long(CURLINFO_NUM_CONNECTS) == 0 && long(CURLINFO_RESPONSE_CODE) != 0
        let connect = micros(CURLINFO_CONNECT_TIME_T), app = micros(CURLINFO_APPCONNECT_TIME_T)
        let lookup = micros(CURLINFO_NAMELOOKUP_TIME_T), pre = micros(CURLINFO_PRETRANSFER_TIME_T)
        let first = micros(CURLINFO_STARTTRANSFER_TIME_T)
        var tls = context.tlsVersion
        if url.scheme == "https" {
            if let tls { tlsByOrigin[url.origin] = tls } else if reused { tls = tlsByOrigin[url.origin] }
        }
        let version: String = switch long(CURLINFO_HTTP_VERSION) {
        case CURL_HTTP_VERSION_1_0: "HTTP/1.0"
        case CURL_HTTP_VERSION_1_1: "HTTP/1.1"
        case CURL_HTTP_VERSION_2_0: "HTTP/2"
        case CURL_HTTP_VERSION_3: "HTTP/3"
        default: ""
        }
        let keep: Set<String> = ["location", "content-type", "content-length", "transfer-encoding", "set-cookie",
                                 "server", "connection", "cache-control", "retry-after"]
        let timings = HopTimings(dnsMs: dnsMs,
                                 connectMs: reused || connect == 0 ? nil : max(0, connect - lookup),
                                 tlsMs: reused || app == 0 ? nil : max(0, app - connect),
                                 firstByteMs: first > 0 ? max(0, first - pre) : 0,
                                 totalMs: milliseconds(ContinuousClock.now - hopStart))
        return HopTrace(index: index, method: method, url: url.text, status: long(CURLINFO_RESPONSE_CODE),
                        location: nil, remoteAddress: string(CURLINFO_PRIMARY_IP), remotePort: long(CURLINFO_PRIMARY_PORT),
                        localAddress: string(CURLINFO_LOCAL_IP), localPort: long(CURLINFO_LOCAL_PORT),
                        connectionReused: reused, tlsVersion: url.scheme == "https" ? tls : nil, httpVersion: version,
                        timings: timings, dnsAnswers: answers,
                        responseHeaders: context.headers.filter { keep.contains($0.name.lowercased()) },
                        requestHeaders: context.requestHeaders, bodyBytes: context.bodyBytes,
                        headerBytes: long(CURLINFO_HEADER_SIZE), downgrade: downgrade, startedAt: wallStart)
    }

    /// Maps a failed transfer to a distinct failure; path problems take precedence.
    private func failure(_ rc: CURLcode, _ easy: UnsafeMutableRawPointer, url: CurlURL, index: Int,
                         budget: Duration, totalBound: Bool) -> FetchFailure {
        if context.isCancelled { return FetchFailure(.cancelled, "cancelled", hop: index) }
        if let bind = context.bindFailure { return bind.failure(interface: path.interfaceName, hop: index) }
        if context.resolveAttempted {
            return FetchFailure(.internalError, "curl tried to resolve \(url.host) itself; refused (the lookup would leave the cellular path)", hop: index)
        }
        let where_ = "\(url.host):\(url.port)"
        let detail = String(cString: curl_easy_strerror(rc))
        switch rc {
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
             CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
            return FetchFailure(.tlsFailure, "TLS with \(where_) failed: \(detail)",
                                hint: "pass the server's CA with --cacert if it is private", hop: index)
        case CURLE_URL_MALFORMAT:
            return FetchFailure(.malformedURL, "malformed URL for hop \(index): \(detail)", hop: index)
        case CURLE_UNSUPPORTED_PROTOCOL:
            return FetchFailure(.nonHTTPScheme, "the \(url.scheme): scheme is not allowed", hop: index)
        default:
            break
        }
        // A transport problem may be the path going away under the chain.
        do throws(FetchFailure) { try path.verify(for: request.ipType, hop: index) } catch { return error }
        var connectTime: curl_off_t = 0
        cp_curl_getinfo_offset(easy, CURLINFO_CONNECT_TIME_T, &connectTime)
        var primary: UnsafeMutablePointer<CChar>?
        cp_curl_getinfo_string(easy, CURLINFO_PRIMARY_IP, &primary)
        let connected = connectTime > 0 || (primary.map { $0.pointee != 0 } ?? false)
        switch rc {
        case CURLE_OPERATION_TIMEDOUT where totalBound:
            return FetchFailure(.totalTimeout, "the chain took longer than \(seconds(request.totalTimeout)) (at \(where_))", hop: index)
        case CURLE_OPERATION_TIMEDOUT where !connected:
            return FetchFailure(.connectTimeout, "couldn't connect to \(where_) within \(seconds(budget))", hop: index)
        case CURLE_OPERATION_TIMEDOUT:
            return FetchFailure(.hopTimeout, "\(where_) did not answer within the hop timeout (\(seconds(budget)))",
                                hint: "raise --hop-timeout", hop: index)
        case CURLE_COULDNT_CONNECT:
            return FetchFailure(.connectFailed, "couldn't connect to \(where_) through \(path.interfaceName): \(detail)", hop: index)
        default:
            return FetchFailure(.transportError, "hop \(index) to \(where_) failed: \(detail)", hop: index)
        }
    }

    private func finalResult(hop: HopTrace, url: CurlURL, stoppedAt: String?) -> FetchResult {
        let contentType = context.headers.last { $0.name.lowercased() == "content-type" }?.value
        let text = String(decoding: context.body, as: UTF8.self)
        var json: JSONValue?
        if contentType?.lowercased().contains("json") == true || text.first == "{" || text.first == "[" {
            json = JSONValue.parse(context.body)
        }
        var callback: CheckCallback?
        if let json, let checkID = json[string: "check_id"], json[string: "code"] != nil || json[string: "error"] != nil {
            callback = CheckCallback(checkID: checkID, code: json[string: "code"], referenceID: json[string: "reference_id"],
                                     error: json[string: "error"], errorDescription: json[string: "error_description"])
        }
        return FetchResult(finalStatus: hop.status, finalURL: url.text, finalBody: text,
                           finalBodyTruncated: context.bodyBytes > context.body.count, finalContentType: contentType,
                           json: json, callback: callback, stoppedAt: stoppedAt)
    }
}

/// True for an IPv4 or IPv6 address literal (no DNS needed).
func isAddressLiteral(_ host: String) -> Bool {
    var v4 = in_addr(), v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
}

/// A duration in milliseconds, to the microsecond.
func milliseconds(_ d: Duration) -> Double {
    microseconds(Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
}

/// Milliseconds rounded to the microsecond, so that traces print `80.914`, not `80.91399999999996`.
func microseconds(_ ms: Double) -> Double {
    (ms * 1000).rounded() / 1000
}

func seconds(_ d: Duration) -> String {
    let ms = milliseconds(d)
    return ms.truncatingRemainder(dividingBy: 1000) == 0 ? "\(Int(ms / 1000)) s" : "\(ms / 1000) s"
}

func wallClock() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
