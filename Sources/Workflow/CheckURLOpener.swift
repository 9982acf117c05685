import CellpathCore
import CellularHTTP

/// The device leg of a check: opens `check_url` and its redirect chain through the cellular
/// path as the tru.ID SDKs do, and recognises the v0.2 callback the chain ends with.
public struct CheckURLOpener: Sendable {
    /// The SDKs' header naming the serving network's operator (MCC-MNC).
    public static let operatorHeaderName = "x-tru-ops"

    public let client: CellularHTTPClient

    public init(client: CellularHTTPClient) {
        self.client = client
    }

    /// Follows `request`'s chain; with `sendOperatorHeader`, every hop also carries
    /// `x-tru-ops: <MCC-MNC>` when the path knows its operator. Never throws: the report holds
    /// the failure. Callable from any context; cancelling the task aborts the chain.
    public func open(_ request: FetchRequest, sendOperatorHeader: Bool) async -> CheckURLReport {
        var request = request
        if sendOperatorHeader, let operatorID = client.path.operatorID {
            request.headers.append(HTTPHeader(Self.operatorHeaderName, operatorID))
        }
        let trace = await client.trace(request)
        return CheckURLReport(trace: trace, callback: CheckCallback(recognizing: trace.result?.json))
    }
}
