import Glibc

/// The response of an async handler, handed from its task to the connection's thread that
/// waits for it. Safe to use from any thread.
final class PendingResponse: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var response: HTTPResponse?

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Hands over the response and wakes the waiting thread; called once, from the handler's task.
    func deliver(_ response: HTTPResponse) {
        pthread_mutex_lock(mutex)
        self.response = response
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Blocks the calling thread (a connection's thread, never the cooperative pool) until
    /// the response is delivered.
    func wait() -> HTTPResponse {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let response { return response }
            pthread_cond_wait(condition, mutex)
        }
    }
}
