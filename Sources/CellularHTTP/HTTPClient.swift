import CellpathCore
import Synchronization
import SystemSupport

/// One request sent on its own, redirects not followed: a backend API call over the default
/// network, or a single request through the cellular path.
public struct HTTPClientRequest: Sendable {
    /// Absolute http or https URL.
    public var url: String
    public var method: String
    /// Extra request headers (validated: token names, no CR/LF/NUL in values).
    public var headers: [HTTPHeader]
    public var body: [UInt8]?
    /// Budget of the whole exchange: DNS, connect, TLS, request and the whole response.
    public var timeout: Duration
    /// Address family used.
    public var ipType: IPType
    /// Extra CA bundle (PEM) trusted besides the system store; verification is never off.
    public var caFile: String?
    /// Bytes of the response body kept in memory; the rest is read and counted, not kept.
    public var maxBodyBytes: Int

    public init(
        url: String, method: String = "GET", headers: [HTTPHeader] = [], body: [UInt8]? = nil,
        timeout: Duration = .seconds(10), ipType: IPType = .any, caFile: String? = nil, maxBodyBytes: Int = 1 << 20
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.ipType = ipType
        self.caFile = caFile
        self.maxBodyBytes = maxBodyBytes
    }
}

/// The response to an `HTTPClientRequest`.
public struct HTTPClientResponse: Sendable, Equatable {
    public var status: Int
    /// Every response header, in order.
    public var headers: [HTTPHeader]
    /// The kept part of the body.
    public var body: [UInt8]
    /// True when the body was longer than `maxBodyBytes`.
    public var bodyTruncated: Bool
    public var contentType: String?
    /// The body when it is JSON.
    public var json: JSONValue?
    /// Addresses, timings and headers of the exchange.
    public var trace: HopTrace

    /// The last header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.last { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Sends single HTTP(S) requests over one route, with a TLS session cache shared by its
/// requests. On the default network every request runs on one shared `CurlEventLoop`, whose
/// connections stay open (keep-alive, up to `maxConnections`, reused while idle for less than
/// `idleLimit`) for later requests; on the bound route every request opens its own connection on
/// a thread of its own and closes it fail-closed. Safe to share.
public final class HTTPClient: Sendable {
    public let route: NetworkRoute
    private let share: CurlShare
    /// The default network's loop; nil on the bound route.
    private let loop: CurlEventLoop?
    /// Lookups started by `resolveAhead`, by `host:port`, until a request takes their answers.
    private let lookupsAhead = Mutex<[String: Task<[String], Never>]>([:])
    /// How `resolveAhead` looks a host up: the system's resolver, or a test's.
    private let lookUp: @Sendable (String) -> [String]

    /// `maxConnections` bounds the default network's open connections kept for reuse: at least
    /// the number of requests expected at once, or bursts open new ones.
    public convenience init(route: NetworkRoute, maxConnections: Int = 64, idleLimit: Duration = .seconds(30)) {
        self.init(route: route, maxConnections: maxConnections, idleLimit: idleLimit, lookUp: SystemResolver.addresses)
    }

    /// As above, with `lookUp` answering `resolveAhead`'s lookups instead of the system's resolver.
    package init(
        route: NetworkRoute, maxConnections: Int = 64, idleLimit: Duration = .seconds(30),
        lookUp: @escaping @Sendable (String) -> [String]
    ) {
        self.route = route
        self.lookUp = lookUp
        let share = CurlShare()
        self.share = share
        if case .defaultNetwork = route {
            loop = CurlEventLoop(share: share, maxConnections: maxConnections, idleLimit: idleLimit)
        } else {
            loop = nil
        }
    }

    /// Starts looking `url`'s host up through the system's resolver (the default network's), on
    /// a thread of its own, and returns: the next request to that host and port takes the
    /// answers instead of looking them up after it was asked for (curl then keeps them for its
    /// DNS cache's time, as its own). Sends nothing to the host. Does nothing on the bound route,
    /// for a numeric host, or for a URL that is not http(s).
    public func resolveAhead(_ url: String) {
        guard loop != nil, let parsed = try? RequestInput.parseHTTPURL(url), !IPAddress.isNumeric(parsed.host)
        else { return }
        let host = parsed.host, lookUp = lookUp
        lookupsAhead.withLock { lookups in
            let key = "\(host):\(parsed.port)"
            guard lookups[key] == nil else { return }
            lookups[key] = Task { await runOnDedicatedThread { lookUp(host) } }
        }
    }

    /// The answers a lookup started ahead found for `request`'s host and port, taken (a later
    /// request resolves as curl does); nil when none was started.
    private func answersAhead(for request: HTTPClientRequest) async -> (host: String, port: Int, addresses: [String])? {
        guard let parsed = try? RequestInput.parseHTTPURL(request.url) else { return nil }
        let key = "\(parsed.host):\(parsed.port)"
        guard let lookup = lookupsAhead.withLock({ $0.removeValue(forKey: key) }) else { return nil }
        let addresses = await lookup.value
        return addresses.isEmpty ? nil : (parsed.host, parsed.port, addresses)
    }

    /// Sends `request` and reads its whole response; a redirect is returned, not followed.
    /// Callable from any context; cancelling the task aborts the request.
    public func send(_ request: HTTPClientRequest) async throws(FetchFailure) -> HTTPClientResponse {
        let cancellation = TransferCancellation(wakeUpPipe: loop == nil)
        let route = route, share = share, loop = loop
        let answers = await answersAhead(for: request)
        let outcome = await withTaskCancellationHandler {
            if let loop {
                return await Self.exchange(
                    request, on: loop, answers: answers, cancellation: cancellation, share: share)
            }
            return await runOnDedicatedThread {
                Self.exchange(request, route: route, cancellation: cancellation, share: share)
            }
        } onCancel: {
            cancellation.cancel()
            loop?.wake()
        }
        return try outcome.get()
    }

    /// Runs one exchange on the default network's loop, with the `answers` looked up ahead for
    /// its host, if any.
    private static func exchange(
        _ request: HTTPClientRequest, on loop: CurlEventLoop, answers: (host: String, port: Int, addresses: [String])?,
        cancellation: TransferCancellation, share: CurlShare
    ) async -> Result<HTTPClientResponse, FetchFailure> {
        do throws(FetchFailure) {
            let (transfer, hop) = try start(request, route: .defaultNetwork, cancellation: cancellation, share: share)
            defer { transfer.close() }
            if let answers { try transfer.take(answers.addresses, for: answers.host, port: answers.port) }
            return .success(try response(transfer, try await transfer.perform(hop, on: loop)))
        } catch {
            return .failure(error)
        }
    }

    /// Runs one exchange on its own transfer. Blocking: call on a dedicated thread.
    private static func exchange(
        _ request: HTTPClientRequest, route: NetworkRoute, cancellation: TransferCancellation,
        share: CurlShare
    ) -> Result<HTTPClientResponse, FetchFailure> {
        do throws(FetchFailure) {
            let (transfer, hop) = try start(request, route: route, cancellation: cancellation, share: share)
            defer { transfer.close() }
            return .success(try response(transfer, try transfer.perform(hop)))
        } catch {
            return .failure(error)
        }
    }

    /// Checks `request` and makes the transfer that sends it.
    private static func start(
        _ request: HTTPClientRequest, route: NetworkRoute, cancellation: TransferCancellation,
        share: CurlShare
    ) throws(FetchFailure) -> (CurlTransfer, TransferRequest) {
        try RequestInput.check(url: request.url, method: request.method, headers: request.headers)
        let url = try RequestInput.parseHTTPURL(request.url)
        if cancellation.isCancelled { throw FetchFailure(.cancelled, "cancelled", hop: 1) }
        let transfer = try CurlTransfer(
            route: route, ipType: request.ipType, caFile: request.caFile,
            maxBodyBytes: request.maxBodyBytes, drainLimit: request.timeout, share: share,
            cancellation: cancellation)
        return (
            transfer,
            TransferRequest(
                index: 1, url: url, method: request.method.uppercased(), headers: request.headers,
                body: request.body, isDowngrade: false, budget: request.timeout, totalBound: false,
                totalTimeout: request.timeout)
        )
    }

    /// The response `transfer` read, or its failure.
    private static func response(
        _ transfer: CurlTransfer, _ outcome: TransferOutcome
    ) throws(FetchFailure) -> HTTPClientResponse {
        if let failure = outcome.failure { throw failure }
        let contentType = transfer.responseHeader("content-type")
        let body = transfer.responseBody
        return HTTPClientResponse(
            status: outcome.trace.status, headers: transfer.responseHeaders, body: body,
            bodyTruncated: transfer.responseBodyTruncated, contentType: contentType,
            json: parseJSONBody(body, contentType: contentType), trace: outcome.trace)
    }
}
