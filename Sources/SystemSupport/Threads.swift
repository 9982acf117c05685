import Glibc

/// Plain POSIX threads, for work that blocks in poll/read/curl and so must stay off Swift's
/// cooperative pool.
public enum Threads {
    /// Starts `body` on a new joinable thread; join it with `join`. `body` is sent to that
    /// thread: what it captures must not be used by the caller afterwards.
    public static func start(_ body: sending @escaping () -> Void) throws(SystemError) -> pthread_t {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            }, box)
        guard rc == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            throw SystemError("pthread_create", code: rc)
        }
        return thread
    }

    /// Starts `body` on a new detached thread.
    public static func detach(_ body: sending @escaping () -> Void) throws(SystemError) {
        let thread = try start(body)
        pthread_detach(thread)
    }

    /// Waits for `thread` to finish.
    public static func join(_ thread: pthread_t) {
        pthread_join(thread, nil)
    }
}

/// Carries a thread's body across `pthread_create`. Safe without `Sendable` checking because
/// `start` takes the body as `sending` and only the new thread touches it afterwards.
private final class ThreadBody: @unchecked Sendable {
    let run: () -> Void
    init(_ run: sending @escaping () -> Void) { self.run = run }
}
