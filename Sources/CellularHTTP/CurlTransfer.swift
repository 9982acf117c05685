import CCurl
import CShims
import CellpathCore
import Glibc
import SystemSupport

/// One request as `CurlTransfer` sends it.
struct TransferRequest {
    /// 1-based position in the chain (1 for a single request).
    var index: Int
    var url: ParsedURL
    var method: String
    var headers: [HTTPHeader]
    var body: [UInt8]?
    var isDowngrade: Bool
    /// Budget of the whole request: DNS, connect, TLS, request and the whole response.
    var budget: Duration
    /// True when `budget` is what is left of the chain's `totalTimeout`.
    var totalBound: Bool
    /// The chain's budget, for messages.
    var totalTimeout: Duration
    /// Headers asked for once the connection is up, before the request is written
    /// (`FetchRequest.lateFirstRequestHeaders`).
    var lateHeaders: (@Sendable () -> [HTTPHeader])? = nil
}

/// What one request produced: its trace, and the failure when the transfer failed.
struct TransferOutcome {
    var trace: HopTrace
    var failure: FetchFailure?
}

/// The libcurl mechanics shared by redirect chains and single requests: one easy handle, run on
/// its own multi handle (connections kept per origin between requests; blocking, never on one of
/// Swift's cooperative pool) or on a shared `CurlEventLoop` (default network only); sockets bound
/// and names pinned to the route, timings, and the leak-proof close. Used by one thread at a time.
final class CurlTransfer {
    private let route: NetworkRoute
    private let ipType: IPType
    private let share: CurlShare
    private let state: TransferState
    private let easy: UnsafeMutableRawPointer
    /// The transfer's own multi handle, made by its first blocking `perform`.
    private var multi: UnsafeMutableRawPointer?
    /// The cellular DNS; nil on the default network, where curl resolves with the system.
    private let resolver: PinnedResolver?
    /// The cellular path's link and addresses, followed during each request; nil on the default network.
    private let watch: PathWatch?
    /// How the path went away during the last request, when it did.
    private var pathLost: FetchFailure?
    /// Why the last request's late headers were refused, when they were.
    private var lateHeaderFailure: FetchFailure?
    /// How long `close()` may wait for the peers (see there).
    private var drainLimit: Duration
    /// DNS answers of the transfer, by host.
    private var chainAnswers: [String: [String]] = [:]
    /// DNS answers of earlier transfers on the same bearer, kept for their TTL; nil keeps none.
    private let bearerCache: BearerDNSCache?
    /// `host:port` entries already pinned with CURLOPT_RESOLVE.
    private var pinned: Set<String> = []
    /// TLS version of each origin's connection, for requests that reuse it.
    private var tlsByOrigin: [String: String] = [:]
    /// Every list handed to the easy handle: curl may read them until the handle is cleaned up.
    private var lists: [UnsafeMutablePointer<curl_slist>] = []
    /// The current request's headers; freed when the next request replaces them.
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var isClosed = false

    /// Creates and configures the handles; `ipType` limits the addresses used on the route.
    /// `drainLimit`, what one request may take, bounds how long `close()` waits for the peers.
    /// `bearerCache` answers names asked by earlier transfers on the bound route, and keeps this one's answers.
    init(
        route: NetworkRoute, ipType: IPType, caFile: String?, maxBodyBytes: Int, drainLimit: Duration, share: CurlShare,
        bearerCache: BearerDNSCache? = nil, cancellation: TransferCancellation
    ) throws(FetchFailure) {
        guard let easy = cp_curl_easy_init() else {
            throw FetchFailure(.internalError, CurlLibrary.failure(otherwise: "couldn't create a curl handle"))
        }
        self.route = route
        self.ipType = ipType
        self.drainLimit = max(drainLimit, .milliseconds(500))
        self.share = share
        self.bearerCache = bearerCache
        self.easy = easy
        switch route {
        case .bound(let path):
            // Sockets bind to the path's address of their own family: the DNS servers' family may
            // differ from `ipType`, which limits the answers asked for and pinned.
            state = TransferState(
                route: route, ipv4: path.ipv4Address, ipv6: path.ipv6Address, cancellation: cancellation)
            let watch = PathWatch(path: path, ipType: ipType)
            self.watch = watch
            resolver = PinnedResolver(
                servers: path.dnsServers, interfaceName: path.interfaceName, state: state, watch: watch)
        case .defaultNetwork:
            state = TransferState(route: route, ipv4: nil, ipv6: nil, cancellation: cancellation)
            resolver = nil
            watch = nil
        }
        state.bodyCap = maxBodyBytes
        try configure(caFile: caFile)
    }

    deinit { close() }

    // MARK: set-up

    private func configure(caFile: String?) throws(FetchFailure) {
        let data = state.unretained
        var ok = true
        func check(_ rc: CURLcode) { if rc != CURLE_OK { ok = false } }
        check(cp_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(cp_curl_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        check(cp_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0))
        check(cp_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        if case .bound = route {
            check(cp_curl_setopt_sockopt(easy, curlSockoptCallback))
            check(cp_curl_setopt_pointer(easy, CURLOPT_SOCKOPTDATA, data))
            check(cp_curl_setopt_closesocket(easy, curlCloseSocketCallback))
            check(cp_curl_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, data))
            check(cp_curl_setopt_resolver_start(easy, curlResolverStartCallback))
            check(cp_curl_setopt_pointer(easy, CURLOPT_RESOLVER_START_DATA, data))
            check(cp_curl_setopt_prereq(easy, curlPrereqCallback))
            check(cp_curl_setopt_pointer(easy, CURLOPT_PREREQDATA, data))
        }
        check(cp_curl_setopt_write(easy, curlWriteCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, data))
        check(cp_curl_setopt_header(easy, curlHeaderCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, data))
        check(cp_curl_setopt_xferinfo(easy, curlXferinfoCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_XFERINFODATA, data))
        check(cp_curl_setopt_long(easy, CURLOPT_NOPROGRESS, 0))
        check(cp_curl_setopt_debug(easy, curlDebugCallback))
        check(cp_curl_setopt_pointer(easy, CURLOPT_DEBUGDATA, data))
        check(cp_curl_setopt_long(easy, CURLOPT_VERBOSE, 1))
        check(cp_curl_setopt_string(easy, CURLOPT_COOKIEFILE, ""))
        check(cp_curl_setopt_string(easy, CURLOPT_USERAGENT, CellpathVersion.userAgent))
        check(cp_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1))
        check(cp_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
        check(cp_curl_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
        check(cp_curl_setopt_long(easy, CURLOPT_TCP_NODELAY, 1))
        let resolve: Int32 =
            switch ipType {
            case .ipv4: CURL_IPRESOLVE_V4
            case .ipv6: CURL_IPRESOLVE_V6
            case .any: CURL_IPRESOLVE_WHATEVER
            }
        check(cp_curl_setopt_long(easy, CURLOPT_IPRESOLVE, Int(resolve)))
        if let caFile { check(cp_curl_setopt_string(easy, CURLOPT_CAINFO, caFile)) }
        if let s = share.handle { check(cp_curl_setopt_share(easy, s)) }
        guard ok else { throw FetchFailure(.internalError, "couldn't configure libcurl") }
    }

    /// A curl_slist of `lines`, kept until the easy handle is cleaned up.
    private func handOver(_ lines: [String]) throws(FetchFailure) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        defer { if let list { lists.append(list) } }
        for line in lines {
            guard let longer = cp_curl_slist_append(list, line) else {
                throw FetchFailure(.internalError, "out of memory")
            }
            list = longer
        }
        return list
    }

    /// Hands `lines` to curl as the request headers and frees the previous request's list, which
    /// curl no longer reads, so that a reused transfer does not grow.
    private func setHeaders(_ lines: [String]) throws(FetchFailure) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let longer = cp_curl_slist_append(list, line) else {
                cp_curl_slist_free_all(list)
                throw FetchFailure(.internalError, "out of memory")
            }
            list = longer
        }
        cp_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, list)
        cp_curl_slist_free_all(headerList)
        headerList = list
    }

    /// Appends `headers` to the request's list, which curl reads when it writes the request
    /// (after the prereq callback that calls this): the list's head, which curl holds, stays.
    /// False, with the failure kept for the hop, when one is refused or memory ran out.
    private func appendHeaders(_ headers: [HTTPHeader], hop: Int) -> Bool {
        do throws(FetchFailure) {
            try RequestInput.check(url: "", method: "GET", headers: headers)
        } catch {
            var refused = error
            refused.hop = hop
            lateHeaderFailure = refused
            return false
        }
        for header in headers where cp_curl_slist_append(headerList, "\(header.name): \(header.value)") == nil {
            lateHeaderFailure = FetchFailure(.internalError, "out of memory", hop: hop)
            return false
        }
        return true
    }

    // MARK: one request

    /// Sends `request` and reads its whole response (kept up to the body cap), blocking. Throws
    /// when the request could not be sent (path gone, DNS failed, bad address family); a transfer
    /// that started and failed returns its trace with the failure.
    func perform(_ request: TransferRequest) throws(FetchFailure) -> TransferOutcome {
        let hop = try prepare(request)
        return finish(request, hop, rc: transfer(hop: request.index))
    }

    /// Sends `request` on `loop`'s shared multi handle (default network only) and reads its whole
    /// response, as `perform(_:)` does, without blocking a thread.
    func perform(_ request: TransferRequest, on loop: CurlEventLoop) async throws(FetchFailure) -> TransferOutcome {
        let hop = try prepare(request)
        cp_curl_setopt_long(easy, CURLOPT_MAXAGE_CONN, max(0, Int(loop.idleLimit.components.seconds)))
        return finish(request, hop, rc: await loop.run(easy, cancellation: state.cancellation))
    }

    /// When and how a prepared request started.
    private struct PreparedHop {
        var hopStart: ContinuousClock.Instant
        var wallStart: Double
        var dns: PinnedAnswers?
    }

    /// Checks the route and sets the easy handle up for `request`: names pinned, method, body,
    /// headers and deadline.
    private func prepare(_ request: TransferRequest) throws(FetchFailure) -> PreparedHop {
        let hopStart = ContinuousClock.now
        let wallStart = WallClock.now
        let index = request.index
        if case .bound(let path) = route { try path.verify(for: ipType, hop: index) }
        state.resetHop()
        pathLost = nil
        lateHeaderFailure = nil

        let host = request.url.host
        let literal = IPAddress.isNumeric(host)
        if literal, (ipType == .ipv4 && host.contains(":")) || (ipType == .ipv6 && !host.contains(":")) {
            throw FetchFailure(
                .noAddress,
                "\(host) is not an \(ipType == .ipv4 ? "IPv4" : "IPv6") address (ip type \(ipType.rawValue))",
                hop: index)
        }
        if case .bound(let path) = route, literal ? LocalAddresses.contains(host) : LocalAddresses.isLocalhostName(host)
        {
            throw FetchFailure(
                .localDestination,
                "\(host) is \(literal ? "an address of" : "a name for") this device: "
                    + "it cannot be reached through \(path.interfaceName)", hop: index)
        }
        state.allowCurlResolve = literal
        var dns: PinnedAnswers?
        if !literal, case .bound(let path) = route, let resolver {
            dns = try pinnedAnswers(for: request, path: path, resolver: resolver)
        }

        // Method, body, headers, deadline.
        cp_curl_setopt_string(easy, CURLOPT_URL, request.url.text)
        cp_curl_setopt_string(easy, CURLOPT_CUSTOMREQUEST, nil)
        cp_curl_setopt_long(easy, CURLOPT_NOBODY, 0)
        cp_curl_setopt_long(easy, CURLOPT_HTTPGET, 1)
        let method = request.method
        if method == "HEAD" {
            cp_curl_setopt_long(easy, CURLOPT_NOBODY, 1)
        } else if let body = request.body {
            cp_curl_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            // curl copies the declared size (nothing for an empty body) but needs a real buffer:
            // a NULL pointer would make it read the body from stdin.
            var buffer = body.isEmpty ? [0] : body
            buffer.withUnsafeMutableBytes { raw in
                _ = cp_curl_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, raw.baseAddress)
            }
            if method != "POST" { cp_curl_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method) }
        } else if method != "GET" {
            cp_curl_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method)
        }
        try setHeaders(["Expect:"] + request.headers.map { "\($0.name): \($0.value)" })
        if let late = request.lateHeaders {
            state.beforeRequest = { [unowned self] in self.appendHeaders(late(), hop: index) }
        }
        let left = request.budget - (ContinuousClock.now - hopStart)
        let leftMs = max(1, Int(milliseconds(left)))
        cp_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, leftMs)
        cp_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, leftMs)
        return PreparedHop(hopStart: hopStart, wallStart: wallStart, dns: dns)
    }

    /// The outcome of a transfer that ended with `rc`.
    private func finish(_ request: TransferRequest, _ hop: PreparedHop, rc: CURLcode) -> TransferOutcome {
        let trace = collect(request, dns: hop.dns, wallStart: hop.wallStart, hopStart: hop.hopStart)
        return TransferOutcome(trace: trace, failure: rc == CURLE_OK ? nil : failure(rc, request))
    }

    /// A hop's DNS answers and where they came from, for its trace.
    private struct PinnedAnswers {
        var addresses: [String]
        var dnsMs: Double
        var source: DNSSource
        var ttl: Int?
    }

    /// Hands curl `addresses` for `host:port` as its resolver's answer on the default network
    /// (looked up ahead), kept for its DNS cache's time as its own answers are.
    func take(_ addresses: [String], for host: String, port: Int) throws(FetchFailure) {
        let entry = "+\(host):\(port):\(addresses.map { $0.contains(":") ? "[\($0)]" : $0 }.joined(separator: ","))"
        cp_curl_setopt_slist(easy, CURLOPT_RESOLVE, try handOver([entry]))
    }

    /// The cellular DNS answers for the request's host (from the chain's answers, the bearer's
    /// cache, or a lookup), pinned into curl so that it never resolves the name itself.
    private func pinnedAnswers(
        for request: TransferRequest, path: CellularPath,
        resolver: PinnedResolver
    ) throws(FetchFailure) -> PinnedAnswers {
        let host = request.url.host
        // Ask only for families the path can bind: a v6 answer on a v4-only bearer would abort the hop.
        let family: IPType =
            ipType != .any
            ? ipType
            : path.ipv4Address == nil ? .ipv6 : path.ipv6Address == nil ? .ipv4 : .any
        let dns: PinnedAnswers
        if let answers = chainAnswers[host] {
            dns = PinnedAnswers(addresses: answers, dnsMs: 0, source: .chain, ttl: nil)
        } else if let hit = bearerCache?.answer(for: host, family: family, on: path) {
            dns = PinnedAnswers(addresses: hit.addresses, dnsMs: 0, source: .bearerCache, ttl: hit.ttlLeft)
        } else {
            let t0 = ContinuousClock.now
            let answer = try resolver.resolve(
                host, ipType: family, budgetMs: max(1, Int(milliseconds(request.budget))),
                totalBound: request.totalBound, hop: request.index)
            dns = PinnedAnswers(
                addresses: answer.addresses, dnsMs: milliseconds(ContinuousClock.now - t0), source: .network,
                ttl: answer.ttl)
            bearerCache?.store(answer.addresses, ttl: answer.ttl, for: host, family: family, on: path)
        }
        let answers = dns.addresses
        chainAnswers[host] = answers
        // Addresses of this device are never reached through the cellular interface: curl would wait for them.
        let reachable = answers.filter { !LocalAddresses.contains($0) }
        guard !reachable.isEmpty else {
            throw FetchFailure(
                .localDestination,
                "\(host) resolves to addresses of this device (\(answers.joined(separator: ", "))): "
                    + "they cannot be reached through \(path.interfaceName)", hop: request.index)
        }
        let key = "\(host):\(request.url.port)"
        if !pinned.contains(key) {
            // IPv6 first (RFC 8305): curl starts with the first address's family and tries the
            // other after its happy-eyeballs delay, every socket bound to the path.
            let reachable = reachable.filter { $0.contains(":") } + reachable.filter { !$0.contains(":") }
            let entry = "\(key):\(reachable.map { $0.contains(":") ? "[\($0)]" : $0 }.joined(separator: ","))"
            cp_curl_setopt_slist(easy, CURLOPT_RESOLVE, try handOver([entry]))
            pinned.insert(key)
        }
        return dns
    }

    /// Runs one transfer on the multi handle (connections stay cached there between requests);
    /// returns early with CURLE_ABORTED_BY_CALLBACK when cancelled, or when the path goes away
    /// (`pathLost`).
    private func transfer(hop: Int) -> CURLcode {
        if multi == nil { multi = cp_curl_multi_init() }
        guard let multi, cp_curl_multi_add_handle(multi, easy) == CURLM_OK else { return CURLE_FAILED_INIT }
        defer { cp_curl_multi_remove_handle(multi, easy) }
        var wakers = [state.cancellation.wakeDescriptor, watch?.descriptor ?? -1].filter { $0 >= 0 }
            .map { curl_waitfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var running: Int32 = 1
        while true {
            guard cp_curl_multi_perform(multi, &running) == CURLM_OK else { return CURLE_FAILED_INIT }
            if running == 0 { break }
            if state.cancellation.isCancelled { return CURLE_ABORTED_BY_CALLBACK }
            do throws(FetchFailure) {
                try watch?.check(hop: hop)
            } catch {
                pathLost = error
                return CURLE_ABORTED_BY_CALLBACK
            }
            guard cp_curl_multi_poll(multi, &wakers, UInt32(wakers.count), 1000, nil) == CURLM_OK else {
                return CURLE_FAILED_INIT
            }
        }
        var left: Int32 = 0
        while let message = cp_curl_multi_info_read(multi, &left) {
            if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
        }
        return CURLE_FAILED_INIT
    }

    private func collect(
        _ request: TransferRequest, dns: PinnedAnswers?, wallStart: Double,
        hopStart: ContinuousClock.Instant
    ) -> HopTrace {
        func long(_ i: CURLINFO) -> Int { var v = 0; cp_curl_getinfo_long(easy, i, &v); return v }
        func micros(_ i: CURLINFO) -> Double {
            var v: curl_off_t = 0; cp_curl_getinfo_offset(easy, i, &v); return Double(v) / 1000
        }
        func string(_ i: CURLINFO) -> String {
            var p: UnsafeMutablePointer<CChar>?
            cp_curl_getinfo_string(easy, i, &p)
            return p.map { String(cString: $0) } ?? ""
        }
        let url = request.url
        let reused = long(CURLINFO_NUM_CONNECTS) == 0 && long(CURLINFO_RESPONSE_CODE) != 0
        let connect = micros(CURLINFO_CONNECT_TIME_T), app = micros(CURLINFO_APPCONNECT_TIME_T)
        let lookup = micros(CURLINFO_NAMELOOKUP_TIME_T), pre = micros(CURLINFO_PRETRANSFER_TIME_T)
        let first = micros(CURLINFO_STARTTRANSFER_TIME_T)
        var tls = state.tlsVersion
        if url.scheme == "https" {
            if let tls { tlsByOrigin[url.origin] = tls } else if reused { tls = tlsByOrigin[url.origin] }
        }
        let version: String =
            switch long(CURLINFO_HTTP_VERSION) {
            case CURL_HTTP_VERSION_1_0: "HTTP/1.0"
            case CURL_HTTP_VERSION_1_1: "HTTP/1.1"
            case CURL_HTTP_VERSION_2_0: "HTTP/2"
            case CURL_HTTP_VERSION_3: "HTTP/3"
            default: ""
            }
        let keep: Set<String> = [
            "location", "content-type", "content-length", "transfer-encoding", "set-cookie",
            "server", "connection", "cache-control", "retry-after"
        ]
        // On the default network curl resolves names itself and times the lookup.
        let timings = HopTimings(
            dnsMs: dns?.dnsMs ?? (resolver == nil ? lookup : 0),
            connectMs: reused || connect == 0 ? nil : max(0, connect - lookup),
            tlsMs: reused || app == 0 ? nil : max(0, app - connect),
            firstByteMs: first > 0 ? max(0, first - pre) : 0,
            totalMs: milliseconds(ContinuousClock.now - hopStart))
        return HopTrace(
            index: request.index, method: request.method, url: url.text, status: long(CURLINFO_RESPONSE_CODE),
            location: nil, remoteAddress: string(CURLINFO_PRIMARY_IP), remotePort: long(CURLINFO_PRIMARY_PORT),
            localAddress: string(CURLINFO_LOCAL_IP), localPort: long(CURLINFO_LOCAL_PORT),
            connectionReused: reused, tlsVersion: url.scheme == "https" ? tls : nil, httpVersion: version,
            timings: timings, dnsAnswers: dns?.addresses, dnsSource: dns?.source, dnsTTL: dns?.ttl,
            responseHeaders: state.headers.filter { keep.contains($0.name.lowercased()) },
            requestHeaders: state.requestHeaders, bodyBytes: state.bodyBytes,
            headerBytes: long(CURLINFO_HEADER_SIZE), downgrade: request.isDowngrade, startedAt: wallStart)
    }

    /// Maps a failed transfer to a distinct failure; path problems take precedence.
    private func failure(_ rc: CURLcode, _ request: TransferRequest) -> FetchFailure {
        let url = request.url, index = request.index
        if state.cancellation.isCancelled { return FetchFailure(.cancelled, "cancelled", hop: index) }
        if let pathLost { return pathLost }
        if let lateHeaderFailure { return lateHeaderFailure }
        if case .bound(let path) = route {
            if let bind = state.bindFailure { return bind.failure(interface: path.interfaceName, hop: index) }
            if state.resolveAttempted {
                return FetchFailure(
                    .internalError,
                    "curl tried to resolve \(url.host) itself; refused (the lookup would leave the cellular path)",
                    hop: index)
            }
        }
        let where_ = "\(url.host):\(url.port)"
        let detail = String(cString: cp_curl_easy_strerror(rc))
        switch rc {
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS,
            CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
            return FetchFailure(
                .tlsFailure, "TLS with \(where_) failed: \(detail)",
                hint: "pass the server's CA with --cacert if it is private", hop: index)
        case CURLE_URL_MALFORMAT:
            return FetchFailure(.malformedURL, "malformed URL for hop \(index): \(detail)", hop: index)
        // The scheme was checked before: curl says this of an answer without an HTTP/1.x or 2 status line (HTTP/0.9).
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY:
            return FetchFailure(
                .notHTTP, "\(where_) answered with something that is not HTTP (no valid status line)", hop: index)
        case CURLE_COULDNT_RESOLVE_HOST:
            return FetchFailure(
                .dnsFailure, "couldn't resolve \(url.host) with the system resolver: \(detail)", hop: index)
        default:
            break
        }
        // A transport problem may be the path going away under the request.
        var through = ""
        if case .bound(let path) = route {
            do throws(FetchFailure) { try path.verify(for: ipType, hop: index, inUse: true) } catch { return error }
            through = " through \(path.interfaceName)"
        }
        var connectTime: curl_off_t = 0
        cp_curl_getinfo_offset(easy, CURLINFO_CONNECT_TIME_T, &connectTime)
        var primary: UnsafeMutablePointer<CChar>?
        cp_curl_getinfo_string(easy, CURLINFO_PRIMARY_IP, &primary)
        let connected = connectTime > 0 || (primary.map { $0.pointee != 0 } ?? false)
        switch rc {
        // curl 7.88 refuses a response header over 100 KB with this code.
        case CURLE_OUT_OF_MEMORY where connected:
            return FetchFailure(.headerTooLarge, "\(where_) sent a response header larger than 100 KB", hop: index)
        case CURLE_OPERATION_TIMEDOUT where request.totalBound:
            return FetchFailure(
                .totalTimeout, "the chain took longer than \(seconds(request.totalTimeout)) (at \(where_))", hop: index)
        case CURLE_OPERATION_TIMEDOUT where !connected:
            return FetchFailure(
                .connectTimeout, "couldn't connect to \(where_) within \(seconds(request.budget))", hop: index)
        case CURLE_OPERATION_TIMEDOUT:
            return FetchFailure(
                .hopTimeout, "\(where_) did not answer within the hop timeout (\(seconds(request.budget)))",
                hint: "raise --hop-timeout", hop: index)
        case CURLE_COULDNT_CONNECT:
            return FetchFailure(.connectFailed, "couldn't connect to \(where_)\(through): \(detail)", hop: index)
        default:
            return FetchFailure(.transportError, "hop \(index) to \(where_) failed: \(detail)", hop: index)
        }
    }

    // MARK: the last response

    /// The last response's headers, all of them, in order.
    var responseHeaders: [HTTPHeader] { state.headers }
    /// The last response header named `name` (case-insensitive).
    func responseHeader(_ name: String) -> String? { state.header(name.lowercased()) }
    /// The kept part of the last response body.
    var responseBody: [UInt8] { state.body }
    /// True when the last response body was longer than the body cap.
    var responseBodyTruncated: Bool { state.bodyBytes > state.body.count }

    /// The cookie jar as curl holds it now (one Netscape-format line per cookie).
    func cookieJar() -> [String] {
        var cookies: UnsafeMutablePointer<curl_slist>?
        cp_curl_getinfo_slist(easy, CURLINFO_COOKIELIST, &cookies)
        defer { cp_curl_slist_free_all(cookies) }
        var jar: [String] = []
        var node = cookies
        while let n = node {
            if let d = n.pointee.data { jar.append(String(cString: d)) }
            node = n.pointee.next
        }
        return jar
    }

    // MARK: closing

    /// Closes every connection and DNS socket without a leak and releases the handles, after a
    /// finished chain and a cancelled one alike; idempotent. On the bound route, the sockets of
    /// curl and c-ares are closed at once where the kernel's own replies follow the bearer
    /// (`KernelRoute`), otherwise in order (see `cshims_close_draining`: connects in progress
    /// completed, peers closed, DNS answers received), so that the process cannot exit before
    /// the peers are done. That is one round trip after a finished request; a peer still working
    /// on a cancelled or timed-out one is waited for as long as a request may take
    /// (`drainLimit`, at least 500 ms): reset any earlier, it may already be sending its answer,
    /// which would then meet no socket. DNS answers still due are waited for 500 ms. When the
    /// path itself is gone, nothing more can come or go: the sockets are closed at once, and the
    /// kernel keeps retrying their FINs through the device. On the default network curl closes
    /// its sockets itself.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        cp_curl_easy_cleanup(easy)
        // Closes the cached connections: through curlCloseSocketCallback on the bound route.
        if let multi { cp_curl_multi_cleanup(multi) }
        lists.forEach { cp_curl_slist_free_all($0) }
        lists = []
        cp_curl_slist_free_all(headerList)
        headerList = nil
        var draining: [Int32] = [], awaited: [Int32] = []
        let pathGone: Bool
        if case .bound(let path) = route {
            do throws(FetchFailure) { try path.verify(for: ipType, hop: nil); pathGone = false } catch {
                pathGone = true
            }
        } else {
            pathGone = false
        }
        for fd in state.keptSockets {
            BoundSockets.remove(fd)
            if pathGone || KernelRoute.repliesFollowBinding(of: fd) {
                Glibc.close(fd)
            } else {
                draining.append(fd)
                awaited.append(Int32(clamping: state.awaitedAnswers[fd] ?? 0))
            }
        }
        state.keptSockets = []
        state.keeperOf = [:]
        state.awaitedAnswers = [:]
        cshims_close_draining(
            draining, awaited, Int32(draining.count), Int32(clamping: Int(milliseconds(drainLimit))), 500)
    }
}
