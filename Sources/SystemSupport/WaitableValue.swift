import Glibc

/// A value guarded by a mutex, whose changes blocked threads can wait for (a pthread
/// condition variable on the monotonic clock). For plain threads that must block — never
/// wait on one from Swift's cooperative pool. Any thread.
public final class WaitableValue<Value: Sendable>: @unchecked Sendable {
    // Unchecked, and safe: `value` is read and written only with `mutex` held; the mutex and
    // the condition are allocated in init, never moved, and destroyed in deinit, when no
    // thread can hold a reference any more.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var value: Value

    public init(_ value: Value) {
        self.value = value
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

    /// The value now.
    public var current: Value {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return value
    }

    /// Changes the value and wakes every waiter.
    public func update(_ change: (inout Value) -> Void) {
        pthread_mutex_lock(mutex)
        change(&value)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Blocks until `ready(value)` holds; returns that value.
    public func wait(until ready: (Value) -> Bool) -> Value {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(value) { pthread_cond_wait(condition, mutex) }
        return value
    }

    /// Blocks until `ready(value)` holds or `timeout` passes; returns the value then.
    public func wait(until ready: (Value) -> Bool, timeout: Duration) -> Value {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(value) {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        return value
    }
}
