import CellpathCore
import CellularHTTP

/// The device leg of a check: opens `check_url` and its redirect chain through the cellular
/// path as the tru.ID SDKs do, and recognises the v0.2 callback the chain ends with.
public struct CheckURLOpener: Sendable {
    /// The SDKs' header naming the networks of the device's SIMs (`OperatorIDs`).
    public static let operatorHeaderName = "x-tru-ops"

    public let client: CellularHTTPClient

    public init(client: CellularHTTPClient) {
        self.client = client
    }

    /// Follows `request`'s chain; with `sendOperatorHeader`, the first request also carries
    /// `x-tru-ops` (`00101`, as the SDKs send it) when the path knows its operator. The chain
    /// stops at a redirect that carries the check's result (`check_id` and a `code` or `error`:
    /// the check's `redirect_url`, the app's own URL), as a phone would hand it to the app;
    /// a provider's `ending` (of its verification `checkID`) says what that result looks like.
    /// Never throws: the report holds the failure (an operator that is not MCC-MNC fails before
    /// any packet). Callable from any context; cancelling the task aborts the chain.
    public func open(
        _ request: FetchRequest, sendOperatorHeader: Bool, ending: ChainEnding = .checkCallback, checkID: String = ""
    ) async -> CheckURLReport {
        var request = request
        // The end the rules set (an OIDC redirect URI), kept beside the ending's own.
        let rulesEnd = request.stopAtRedirect
        request.stopAtRedirect = { ending.stopsAt($0) || rulesEnd?($0) == true }
        if sendOperatorHeader, let operatorID = client.path.operatorID {
            do {
                let operators = try OperatorIDs(parsing: operatorID)
                request.firstRequestHeaders.append(HTTPHeader(Self.operatorHeaderName, operators.headerValue))
            } catch {
                let failure = FetchFailure(.invalidHeader, error.message, hint: error.hint, hop: 1)
                let trace = FetchReport(
                    interfaceName: client.path.interfaceName, modemBackend: client.path.modemBackend,
                    localAddresses: [],
                    dnsServers: client.path.dnsServers,
                    hops: [], result: nil, failure: failure, totalMs: 0)
                return CheckURLReport(trace: trace, callback: nil)
            }
        }
        let trace = await client.trace(request)
        return CheckURLReport(trace: trace, callback: ending.callback(of: trace, checkID: checkID))
    }
}
