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

/// Async calls that throw `ModemError` as values: for `async let`, whose `try await` would
/// widen the error to `any Error`.
enum ModemResult {
    static func of<Value>(_ body: () async throws(ModemError) -> Value) async -> Result<Value, ModemError> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
}
