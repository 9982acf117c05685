import FoundationEssentials
import HTTPServer

/// A simulated web service as pure request → response logic; `serve` runs it on an
/// `HTTPServer`.
public protocol SimulatedHTTPEndpoint: Sendable {
    /// Answers one request; called on the connection's thread, possibly concurrently.
    func handle(_ request: HTTPRequest) -> HTTPResponse
}

extension SimulatedHTTPEndpoint {
    /// Serves this endpoint on `listener` (TLS when `tls` is given) and writes one
    /// `RequestLog` line per request to `log`, tagged with `namespace`.
    public func serve(on listener: HTTPServer.Listener, tls: HTTPServer.TLSIdentity? = nil, namespace: String,
                      clock: SimulatorClock = .system,
                      log: @escaping @Sendable (String) -> Void) throws -> HTTPServer {
        try HTTPServer(listener: listener, tls: tls) { request in
            let response = self.handle(request)
            let status = response.delivery == .never ? nil : response.status
            log(RequestLog.line(time: clock.now(), namespace: namespace, request: request, status: status))
            return response
        }
    }
}
