import HTTPServer

/// A simulated web service as pure request → response logic; the world (`Simulator`) serves it
/// on an `HTTPServer`.
public protocol SimulatedHTTPEndpoint: Sendable {
    /// Answers one request; called on the connection's thread, possibly concurrently.
    func handle(_ request: HTTPRequest) -> HTTPResponse
}
