import Glibc

/// A one-shot signal that delayed and unanswered requests wait on; `fire()` wakes them all.
/// Safe to use from any thread.
final class StopSignal: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var fired = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Wakes every waiter, now and later.
    func fire() {
        pthread_mutex_lock(mutex)
        fired = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Whether `fire()` was called.
    var hasFired: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return fired
    }

    /// Waits up to `duration`; returns true when the signal fired.
    func wait(for duration: Duration) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = duration.components
        var nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        deadline.tv_nsec = nanoseconds
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !fired {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        return fired
    }

    /// Waits until the signal fires.
    func waitForever() {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !fired { pthread_cond_wait(condition, mutex) }
    }
}
