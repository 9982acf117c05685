import Glibc
import Synchronization

/// The one signal-handling scheme of cellpath's processes (the CLI, the simulator daemon, the
/// server): an async-signal-safe handler writes the signal number to a pipe, and the process
/// reads it either in its own poll loop (`readFD`, `take()`) or on a watcher thread that calls
/// a handler with the signal and how many have arrived (`SignalWatcher(signals:handler:)`).
/// The policy of the interactive commands: the first SIGINT/SIGTERM cancels and cleans up,
/// the second runs the last-resort clean-ups (`EmergencyExit`) and exits. One event counts
/// once: a signal that the same process sent again within `repeatWindow` (`timeout` sends it
/// to its child and then to the child's process group) is not a second one; a terminal's
/// Ctrl-C (sent by the kernel) always counts.
/// One watcher per process at a time; any thread.
public final class SignalWatcher: Sendable {
    /// SIGINT and SIGTERM.
    public static let termination: [Int32] = [SIGINT, SIGTERM]
    /// Written to the pipe by `stop()` to end the watcher thread (no signal has number 0).
    private static let stopSignal: Int32 = 0
    /// How close together two sends of one signal by one process are one event.
    public static let repeatWindow = Duration.seconds(1)

    /// Readable when a signal is pending; for poll loops (`take()` reads it).
    public var readFD: Int32 { pipe.read.rawValue }
    private let pipe: (read: FileDescriptor, write: FileDescriptor)
    private let signals: [Int32]
    /// The thread that calls the handler, in callback mode.
    private let watcher: pthread_t?
    private let stopped = StopFlag()

    /// Installs handlers for `signals`; signals are then read with `take()` (poll mode).
    public convenience init(signals: [Int32] = termination) throws(SystemError) {
        try self.init(signals: signals, watcher: nil)
    }

    /// Installs handlers for `signals` and calls `handler(signal, count)` on a watcher thread
    /// for each one, `count` being 1 for the first signal, 2 for the second, and so on.
    public convenience init(
        signals: [Int32] = termination,
        handler: @escaping @Sendable (_ signal: Int32, _ count: Int) -> Void
    ) throws(SystemError) {
        try self.init(signals: signals, watcher: handler)
    }

    private init(signals: [Int32], watcher handler: (@Sendable (Int32, Int) -> Void)?) throws(SystemError) {
        pipe = try FileDescriptor.pipe(nonBlocking: true)
        self.signals = signals
        guard
            signalWriteFD.compareExchange(expected: -1, desired: pipe.write.rawValue, ordering: .acquiringAndReleasing)
                .exchanged
        else {
            // Not fully initialised: no deinit runs, and the installed watcher stays as it is.
            throw SystemError("a signal watcher is already installed", code: EBUSY)
        }
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = { signal, info, _ in
            let saved = errno
            // One write of a whole record (below PIPE_BUF: atomic).
            var record = SignalRecord(
                signal: signal, sender: info?.pointee._sifields._kill.si_pid ?? 0,
                code: info?.pointee.si_code ?? 0)
            _ = write(signalWriteFD.load(ordering: .relaxed), &record, MemoryLayout<SignalRecord>.size)
            errno = saved
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART | SA_SIGINFO
        var handled = sigset_t()
        sigemptyset(&handled)
        for signal in signals {
            sigaction(signal, &action, nil)
            sigaddset(&handled, signal)
        }
        // A parent may have blocked them (test runners do); this thread takes them.
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        Glibc.signal(SIGPIPE, SIG_IGN)
        guard let handler else {
            watcher = nil
            return
        }
        let readFD = pipe.read.rawValue
        do {
            watcher = try Threads.start {
                var count = 0
                var repeats = RepeatFilter()
                while true {
                    var fds = [pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)]
                    guard poll(&fds, 1, -1) > 0 else { continue }
                    while let record = SignalRecord.read(readFD) {
                        if record.signal == SignalWatcher.stopSignal { return }
                        guard repeats.isNewEvent(record) else { continue }
                        count += 1
                        handler(record.signal, count)
                    }
                }
            }
        } catch {
            signalWriteFD.store(-1, ordering: .releasing)
            for signal in signals { Glibc.signal(signal, SIG_DFL) }
            throw error
        }
    }

    /// The next pending signal, if any (poll mode).
    public func take() -> Int32? {
        SignalRecord.read(pipe.read.rawValue)?.signal
    }

    /// Restores the default dispositions, stops the watcher thread and closes the pipe. Idempotent.
    public func stop() {
        guard stopped.set() else { return }
        for signal in signals { Glibc.signal(signal, SIG_DFL) }
        signalWriteFD.store(-1, ordering: .releasing)
        if let thread = watcher, pthread_equal(thread, pthread_self()) == 0 {
            // Wakes the watcher at once: it returns on this record.
            var record = SignalRecord(signal: Self.stopSignal, sender: 0, code: 0)
            _ = write(pipe.write.rawValue, &record, MemoryLayout<SignalRecord>.size)
            Threads.join(thread)
        }
        pipe.read.close()
        pipe.write.close()
    }

    deinit { stop() }
}

/// A signal as the handler saw it: its number, the process that sent it (0 for the kernel) and
/// how (`si_code`: `SI_USER` for kill, `SI_KERNEL` for a terminal's Ctrl-C).
struct SignalRecord {
    var signal: Int32
    var sender: pid_t
    var code: Int32

    /// The next whole record on the non-blocking pipe `fd`, nil when none is there.
    static func read(_ fd: Int32) -> SignalRecord? {
        var record = SignalRecord(signal: 0, sender: 0, code: 0)
        let n = Glibc.read(fd, &record, MemoryLayout<SignalRecord>.size)
        return n == MemoryLayout<SignalRecord>.size ? record : nil
    }
}

/// Tells one event from the same process sending the same signal again at once.
struct RepeatFilter {
    private var last: (signal: Int32, sender: pid_t, at: ContinuousClock.Instant)?

    /// False for a signal that its sending process already sent within `repeatWindow`.
    mutating func isNewEvent(_ record: SignalRecord, at now: ContinuousClock.Instant = .now) -> Bool {
        defer { last = (record.signal, record.sender, now) }
        guard record.code == SI_USER, record.sender != 0, let last else { return true }
        return
            !(last.signal == record.signal && last.sender == record.sender
            && now - last.at < SignalWatcher.repeatWindow)
    }
}

/// The write end of the installed watcher's pipe, read by the signal handler.
private let signalWriteFD = Atomic<Int32>(-1)

/// A flag shared with the watcher thread.
private final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    /// Sets the flag; true for the call that set it.
    func set() -> Bool { !value.exchange(true, ordering: .acquiringAndReleasing) }
}

/// Last-resort clean-ups that must run even when the user insists on exiting at once (the
/// second Ctrl-C): e.g. the HTTP engine's abortive close of bearer-bound sockets, so that no
/// segment of theirs is answered later through another route. Hooks must be quick and must not
/// block; they run on the signal watcher thread. Any thread.
public enum EmergencyExit {
    private static let hooks = Mutex<[@Sendable () -> Void]>([])

    /// Registers `hook` for the rest of the process's life.
    public static func register(_ hook: @escaping @Sendable () -> Void) {
        hooks.withLock { $0.append(hook) }
    }

    /// Runs every registered hook, then exits the process at once with `status`.
    public static func exit(_ status: Int32) -> Never {
        let all = hooks.withLock { $0 }
        for hook in all { hook() }
        _exit(status)
    }
}
