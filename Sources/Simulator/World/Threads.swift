import Glibc

/// Starts `body` on a new joinable pthread (the relay and the control server need threads
/// that block in poll/read, which Swift's cooperative pool must never do).
func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
    let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { raw in
        let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
        body.run()
        return nil
    }, box)
    if rc != 0 {
        Unmanaged<ThreadBody>.fromOpaque(box).release()
        return nil
    }
    return thread
}

private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
