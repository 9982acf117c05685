/// How often and how patiently a failed API call is tried again: only transient failures
/// (5xx but 501, 429, timeouts, resets), with jittered exponential backoff; a 429's
/// `Retry-After` is honoured up to `maxRetryAfter`.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included (1: never retry).
    public var maxAttempts: Int
    /// Delay before the second attempt; doubled for each further one.
    public var baseDelay: Duration
    /// Cap on one backoff delay.
    public var maxDelay: Duration
    /// Cap on a delay a `Retry-After` header asks for; a longer one is not waited for.
    public var maxRetryAfter: Duration

    public init(maxAttempts: Int, baseDelay: Duration, maxDelay: Duration, maxRetryAfter: Duration) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// Three attempts, 200 ms then 400 ms (±50 %), Retry-After up to 5 s.
    public static let `default` = RetryPolicy(
        maxAttempts: 3, baseDelay: .milliseconds(200), maxDelay: .seconds(2),
        maxRetryAfter: .seconds(5))
    /// One attempt only.
    public static let never = RetryPolicy(maxAttempts: 1, baseDelay: .zero, maxDelay: .zero, maxRetryAfter: .zero)

    /// The delay before attempt `attempt + 1` after `error` on attempt `attempt` (1-based), or nil
    /// when the call must not be retried.
    func delay(after error: TruAPIError, attempt: Int) -> Duration? {
        var retryAfter: Duration?
        if case .upstream(let answer) = error { retryAfter = answer.retryAfter }
        return delay(transient: error.isTransient, retryAfter: retryAfter, attempt: attempt)
    }

    /// The delay before attempt `attempt + 1` after a failure on attempt `attempt` (1-based) that
    /// is `transient` and whose answer asked to wait `retryAfter`, or nil when the call must not
    /// be retried. For the clients of other APIs, whose errors are their own.
    public func delay(transient: Bool, retryAfter: Duration?, attempt: Int) -> Duration? {
        guard attempt < maxAttempts, transient else { return nil }
        if let retryAfter {
            return retryAfter <= maxRetryAfter ? retryAfter : nil
        }
        let exponential = baseDelay * (1 << min(attempt - 1, 20))
        let capped = min(exponential, maxDelay)
        return min(capped * Double.random(in: 0.5 ... 1.5), maxDelay)
    }
}
