import CellpathCore
import SystemSupport

/// The cellular HTTP engine: fetches a URL and its whole redirect chain, DNS included, through
/// one `CellularPath`, failing closed. Safe to share; chains run on their own threads.
public final class CellularHTTPClient: Sendable {
    public let path: CellularPath
    /// DNS answers shared with the other chains on the same bearer; nil: each chain asks anew.
    public let dnsCache: BearerDNSCache?
    private let share = CurlShare()

    public init(path: CellularPath, dnsCache: BearerDNSCache? = nil) {
        self.path = path
        self.dnsCache = dnsCache
    }

    /// Loads and initialises libcurl (its library closure, TLS) on a thread of its own, for a
    /// command that has other work to do before its first request (choosing a modem, bringing a
    /// bearer up): that request then finds it ready. A request made meanwhile waits for the work
    /// in progress; nothing happens when it is done. (A process that ends meanwhile runs no exit
    /// handler that could race with it: `ProcessEnd`.)
    public static func prepareInBackground() {
        try? Threads.detach { _ = CurlShare.ready }
    }

    /// Runs the chain and returns every hop with either the result or the failure.
    /// Callable from any context: the blocking libcurl work runs on a dedicated thread;
    /// cancelling the task aborts the running hop.
    public func trace(_ request: FetchRequest) async -> FetchReport {
        let cancellation = TransferCancellation()
        let path = path, share = share, dnsCache = dnsCache
        return await withTaskCancellationHandler {
            await runOnDedicatedThread {
                ChainRunner(path: path, request: request, cancellation: cancellation, share: share, dnsCache: dnsCache)
                    .run()
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// Runs the chain and returns its result, or throws the failure as a `CellpathError`.
    public func fetch(_ request: FetchRequest) async throws(CellpathError) -> FetchResult {
        let report = await trace(request)
        if let failure = report.failure { throw failure.cellpathError }
        guard let result = report.result else { throw CellpathError(.internalError, "fetch ended without a result") }
        return result
    }
}

/// Runs blocking `body` on a new detached pthread and resumes with its value, so blocking
/// libcurl/c-ares calls never occupy a thread of Swift's cooperative pool.
func runOnDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        do throws(SystemError) {
            try Threads.detach { continuation.resume(returning: body()) }
        } catch {
            continuation.resume(returning: body())  // no thread to be had: run here rather than never
        }
    }
}
