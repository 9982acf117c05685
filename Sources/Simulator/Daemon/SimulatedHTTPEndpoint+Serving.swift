import HTTPServer
import SimulatedServices

extension SimulatedHTTPEndpoint {
    /// Serves this endpoint on `listener` (TLS when `tls` is given) and writes one
    /// `RequestLog` line per request to `log`, tagged with `namespace`.
    public func serve(
        on listener: HTTPServer.Listener, tls: HTTPServer.TLSIdentity? = nil, namespace: String,
        clock: SimulatorClock = .system,
        log: @escaping @Sendable (String) -> Void
    ) throws -> HTTPServer {
        try HTTPServer(listener: listener, tls: tls) { request in
            let response = self.handle(request)
            let status = response.delivery == .never ? nil : response.status
            log(RequestLog.line(time: clock.now(), namespace: namespace, request: request, status: status))
            return response
        }
    }
}
