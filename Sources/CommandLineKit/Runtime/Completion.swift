import SystemSupport

/// The result of a task, for a thread that blocks until it is there. The main thread waits here
/// for an async command rather than in `dispatch_main`, which an async main enters at its first
/// suspension: that ends the main thread with `pthread_exit` (a forced unwind through
/// `.eh_frame`) and starts another one for the main queue, at a cost in start-up time and memory
/// (docs/benchmarks.md).
final class Completion<Value: Sendable>: Sendable {
    /// Nil until the task is done.
    private let result = WaitableValue<Result<Value, any Error>?>(nil)

    /// Runs `body` (inside a task) and hands its value or error to the waiting thread.
    func finish(_ body: () async throws -> Value) async {
        let outcome: Result<Value, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.update { $0 = outcome }
    }

    /// Blocks the calling thread (a plain thread, never one of Swift's pool) until `finish` is
    /// done; returns its value or throws its error.
    func wait() throws -> Value {
        try result.wait { $0 != nil }!.get()
    }
}
