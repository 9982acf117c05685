import CellpathCore

/// Hands the indications that a signal handler decodes on the loop thread to the task that
/// follows them. Any thread.
final class IndicationSink: Sendable {
    let stream: AsyncStream<ModemIndication>
    private let continuation: AsyncStream<ModemIndication>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: ModemIndication.self)
    }

    func yield(_ indication: ModemIndication) { continuation.yield(indication) }

    /// Ends the stream: the session is closed.
    func finish() { continuation.finish() }
}
