import CellpathCore
import CellularHTTP
import SystemSupport

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
    /// `x-tru-ops` (`00101`, as the SDKs send it) when the path knows its operator, or
    /// `liveOperatorID` tells one: asked once the first request's connection is up (it may block
    /// the chain's thread), its MCC-MNC is sent instead of the path's. The chain
    /// stops at a redirect that carries the check's result (`check_id` and a `code` or `error`:
    /// the check's `redirect_url`, the app's own URL), as a phone would hand it to the app;
    /// a provider's `ending` (of its verification `checkID`) says what that result looks like.
    /// Never throws: the report holds the failure (an operator that is not MCC-MNC fails before
    /// any packet). Callable from any context; cancelling the task aborts the chain.
    public func open(
        _ request: FetchRequest, sendOperatorHeader: Bool, liveOperatorID: (@Sendable () -> String?)? = nil,
        ending: ChainEnding = .checkCallback, checkID: String = ""
    ) async -> CheckURLReport {
        var request = request
        // The end the rules set (an OIDC redirect URI), kept beside the ending's own.
        let rulesEnd = request.stopAtRedirect
        request.stopAtRedirect = { ending.stopsAt($0) || rulesEnd?($0) == true }
        let sent = WaitableValue<String?>(nil)
        if sendOperatorHeader {
            // The path's operator, checked before any packet.
            var known: (id: String, operators: OperatorIDs)?
            if let operatorID = client.path.operatorID {
                do {
                    known = (operatorID, try OperatorIDs(parsing: operatorID))
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
            sent.update { $0 = known?.id }
            if let liveOperatorID {
                request.lateFirstRequestHeaders = { [known] in
                    let live = liveOperatorID().flatMap { id in
                        (try? OperatorIDs(parsing: id)).map { (id: id, operators: $0) }
                    }
                    guard let chosen = live ?? known else { return [] }
                    sent.update { $0 = chosen.id }
                    return [HTTPHeader(Self.operatorHeaderName, chosen.operators.headerValue)]
                }
            } else if let known {
                request.firstRequestHeaders.append(HTTPHeader(Self.operatorHeaderName, known.operators.headerValue))
            }
        }
        let trace = await client.trace(request)
        var report = CheckURLReport(trace: trace, callback: ending.callback(of: trace, checkID: checkID))
        report.operatorSent = sent.current
        return report
    }
}
