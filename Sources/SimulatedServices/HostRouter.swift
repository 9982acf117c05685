import HTTPServer

/// The fake APIs that share the simulated internet's API address, told apart by the request's
/// `Host` (its port ignored), as a CDN serves several names on one address: the providers'
/// fakes by their host names, anything else the fake tru.ID API's.
public struct HostRouter: SimulatedHTTPEndpoint {
    public let fallback: any SimulatedHTTPEndpoint
    public let byHost: [String: any SimulatedHTTPEndpoint]

    public init(fallback: any SimulatedHTTPEndpoint, byHost: [String: any SimulatedHTTPEndpoint]) {
        self.fallback = fallback
        self.byHost = byHost
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let host = request.headers["Host"].map { $0.split(separator: ":").first.map(String.init) ?? $0 }
        return (host.flatMap { byHost[$0.lowercased()] } ?? fallback).handle(request)
    }
}
