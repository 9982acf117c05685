import CellpathCore

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

    public init(url: String, method: String = "GET", headers: [HTTPHeader] = [], body: [UInt8]? = nil,
                timeout: Duration = .seconds(10), ipType: IPType = .any, caFile: String? = nil, maxBodyBytes: Int = 1 << 20) {
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
/// requests. On the default network it keeps up to 64 idle transfers with their connections
/// (keep-alive) for later requests, closing one idle for 30 s; on the bound route every request
/// opens its own connection and closes it fail-closed. Safe to share; requests run on their own threads.
public final class HTTPClient: Sendable {
    public let route: NetworkRoute
    private let share = CurlShare()
    /// Idle transfers of the default network; nil on the bound route.
    private let pool: TransferPool?

    public convenience init(route: NetworkRoute) {
        self.init(route: route, poolCapacity: 64, idleLimit: .seconds(30))
    }

    init(route: NetworkRoute, poolCapacity: Int, idleLimit: Duration) {
        self.route = route
        if case .defaultNetwork = route {
            pool = TransferPool(capacity: poolCapacity, idleLimit: idleLimit)
        } else {
            pool = nil
        }
    }

    /// Transfers kept idle for reuse now.
    var idleTransfers: Int { pool?.count ?? 0 }

    /// Sends `request` and reads its whole response; a redirect is returned, not followed.
    /// Callable from any context: the blocking libcurl work runs on a dedicated thread;
    /// cancelling the task aborts the request.
    public func send(_ request: HTTPClientRequest) async throws(FetchFailure) -> HTTPClientResponse {
        let cancellation = TransferCancellation()
        let route = route, share = share, pool = pool
        let outcome = await withTaskCancellationHandler {
            await runOnDedicatedThread { Self.exchange(request, route: route, cancellation: cancellation, share: share, pool: pool) }
        } onCancel: {
            cancellation.cancel()
        }
        return try outcome.get()
    }

    /// Runs one exchange on an idle transfer of `pool` or a new one, and gives it back to the pool
    /// only when the exchange ended cleanly (a whole response, not cancelled); otherwise closes it.
    /// Blocking: call on a dedicated thread.
    private static func exchange(_ request: HTTPClientRequest, route: NetworkRoute, cancellation: TransferCancellation,
                                 share: CurlShare, pool: TransferPool?) -> Result<HTTPClientResponse, FetchFailure> {
        do throws(FetchFailure) {
            try RequestInput.check(url: request.url, method: request.method, headers: request.headers)
            let url = try RequestInput.parseHTTPURL(request.url)
            let key = TransferPool.Key(caFile: request.caFile, ipType: request.ipType)
            let transfer: CurlTransfer
            if let idle = pool?.take(key) {
                idle.reuse(maxBodyBytes: request.maxBodyBytes, drainLimit: request.timeout, cancellation: cancellation)
                transfer = idle
            } else {
                transfer = try CurlTransfer(route: route, ipType: request.ipType, caFile: request.caFile,
                                            maxBodyBytes: request.maxBodyBytes, drainLimit: request.timeout, share: share,
                                            cancellation: cancellation)
            }
            var clean = false
            defer { if clean, let pool { pool.put(transfer, key) } else { transfer.close() } }
            if cancellation.isCancelled { throw FetchFailure(.cancelled, "cancelled", hop: 1) }
            let outcome = try transfer.perform(TransferRequest(index: 1, url: url, method: request.method.uppercased(),
                                                               headers: request.headers, body: request.body, isDowngrade: false,
                                                               budget: request.timeout, totalBound: false, totalTimeout: request.timeout))
            if let failure = outcome.failure { throw failure }
            let contentType = transfer.responseHeader("content-type")
            let body = transfer.responseBody
            let response = HTTPClientResponse(status: outcome.trace.status, headers: transfer.responseHeaders, body: body,
                                              bodyTruncated: transfer.responseBodyTruncated, contentType: contentType,
                                              json: parseJSONBody(body, contentType: contentType), trace: outcome.trace)
            clean = !cancellation.isCancelled
            return .success(response)
        } catch {
            return .failure(error)
        }
    }
}
