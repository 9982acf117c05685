import CellpathCore
import Glibc

/// Runs one redirect chain through the cellular path: `RedirectPolicy` decides each step,
/// `CurlTransfer` sends each request. Blocking: create and run it on a dedicated thread,
/// never on Swift's cooperative pool.
final class ChainRunner {
    private let path: CellularPath
    private let request: FetchRequest
    private let cancellation: TransferCancellation
    private let share: CurlShare
    private let dnsCache: BearerDNSCache?
    private let started = ContinuousClock.now
    private var hops: [HopTrace] = []
    private var transfer: CurlTransfer?

    init(
        path: CellularPath, request: FetchRequest, cancellation: TransferCancellation, share: CurlShare,
        dnsCache: BearerDNSCache?
    ) {
        self.path = path
        self.request = request
        self.cancellation = cancellation
        self.share = share
        self.dnsCache = dnsCache
    }

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
        transfer?.close()
        let (v4, v6) = path.bindAddresses(for: request.ipType)
        return FetchReport(
            interfaceName: path.interfaceName, modemBackend: path.modemBackend,
            localAddresses: [v4, v6].compactMap { $0 },
            dnsServers: path.dnsServers, hops: hops, result: result, failure: failure,
            totalMs: milliseconds(finished - started))
    }

    private func chain() throws(FetchFailure) -> FetchResult {
        try request.validate()
        let url = try CurlURL.parse(request.url).get()
        try path.verify(for: request.ipType, hop: nil)
        let transfer = try CurlTransfer(
            route: .bound(path), ipType: request.ipType, caFile: request.caFile,
            maxBodyBytes: request.maxBodyBytes, drainLimit: request.hopTimeout, share: share,
            bearerCache: dnsCache, cancellation: cancellation)
        self.transfer = transfer
        var policy = RedirectPolicy(
            url: url, method: request.method.uppercased(), body: request.body,
            headers: request.headers, firstRequestHeaders: request.firstRequestHeaders,
            maxHops: request.maxHops, stopAtPrefix: request.stopAtPrefix, stopAt: request.stopAtRedirect,
            strict: request.strict,
            resolve: CurlURL.resolve)
        while true {
            if cancellation.isCancelled { throw FetchFailure(.cancelled, "cancelled", hop: policy.nextIndex) }
            let next = try policy.nextRequest()
            let (budget, totalBound) = try budget(forHop: next.index)
            let outcome = try transfer.perform(
                TransferRequest(
                    index: next.index, url: next.url, method: next.method,
                    headers: next.headers, body: next.body, isDowngrade: next.isDowngrade,
                    budget: budget, totalBound: totalBound, totalTimeout: request.totalTimeout,
                    lateHeaders: next.index == 1 ? request.lateFirstRequestHeaders : nil))
            hops.append(outcome.trace)
            if let failure = outcome.failure { throw failure }

            switch policy.decide(
                status: outcome.trace.status, location: transfer.responseHeader("location"),
                cookieJar: transfer.cookieJar())
            {
            case .final:
                return finalResult(transfer, url: next.url, stoppedAt: nil)
            case .stop(let location, let stoppedAt):
                hops[hops.count - 1].location = location
                return finalResult(transfer, url: next.url, stoppedAt: stoppedAt)
            case .follow(let location):
                hops[hops.count - 1].location = location
            case .refuse(let failure, let location):
                hops[hops.count - 1].location = location
                throw failure
            }
        }
    }

    /// The budget of hop `index`: the hop timeout, or what is left of the total when less
    /// (`totalBound`); throws `totalTimeout` when nothing is left.
    private func budget(forHop index: Int) throws(FetchFailure) -> (budget: Duration, totalBound: Bool) {
        let totalLeft = request.totalTimeout - (ContinuousClock.now - started)
        if totalLeft <= .zero {
            throw FetchFailure(.totalTimeout, "the chain took longer than \(seconds(request.totalTimeout))", hop: index)
        }
        return (min(request.hopTimeout, totalLeft), totalLeft < request.hopTimeout)
    }

    private func finalResult(_ transfer: CurlTransfer, url: ParsedURL, stoppedAt: String?) -> FetchResult {
        let contentType = transfer.responseHeader("content-type")
        let body = transfer.responseBody
        return FetchResult(
            finalStatus: hops[hops.count - 1].status, finalURL: url.text,
            finalBody: String(decoding: body, as: UTF8.self),
            finalBodyTruncated: transfer.responseBodyTruncated, finalContentType: contentType,
            json: parseJSONBody(body, contentType: contentType), stoppedAt: stoppedAt)
    }
}

/// The body as JSON when its content type says so or it looks like an object or array.
func parseJSONBody(_ body: [UInt8], contentType: String?) -> JSONValue? {
    guard
        contentType?.lowercased().contains("json") == true || body.first == UInt8(ascii: "{")
            || body.first == UInt8(ascii: "[")
    else {
        return nil
    }
    return JSONValue.parse(body)
}
