import Glibc
import Synchronization

/// Cancels one running transfer from any thread: a flag the transfer's callbacks and loops read,
/// and a pipe that wakes the transfer's poll at once.
final class TransferCancellation: Sendable {
    private let cancelled = Atomic<Bool>(false)
    /// Read end of the wake-up pipe, polled beside curl's sockets; -1 when no pipe could be made
    /// (the poll's own timeout then bounds the delay).
    let wakeDescriptor: Int32
    private let signalDescriptor: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
        }
        wakeDescriptor = ends[0]
        signalDescriptor = ends[1]
    }

    deinit {
        if wakeDescriptor >= 0 { close(wakeDescriptor) }
        if signalDescriptor >= 0 { close(signalDescriptor) }
    }

    /// True once `cancel()` was called.
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Asks the transfer to stop; safe from any thread, any number of times.
    func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        guard signalDescriptor >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(signalDescriptor, &byte, 1)
    }
}
