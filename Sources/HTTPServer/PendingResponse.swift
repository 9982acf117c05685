import SystemSupport

/// The response of an async handler, handed from its task to the connection's thread that
/// waits for it. Safe to use from any thread.
final class PendingResponse: Sendable {
    private let response = WaitableValue<HTTPResponse?>(nil)

    /// Hands over the response and wakes the waiting thread; called once, from the handler's task.
    func deliver(_ response: HTTPResponse) { self.response.update { $0 = response } }

    /// Blocks the calling thread (a connection's thread, never the cooperative pool) until
    /// the response is delivered.
    func wait() -> HTTPResponse {
        guard let response = response.wait(until: { $0 != nil }) else { preconditionFailure("woken without a response") }
        return response
    }
}
