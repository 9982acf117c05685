import Glibc
import Synchronization
import SystemSupport

/// Cancels one running transfer from any thread: a flag the transfer's callbacks and loops read,
/// and a pipe that wakes the transfer's poll at once.
final class TransferCancellation: Sendable {
    private let cancelled = Atomic<Bool>(false)
    /// Nil when no pipe could be made or none was asked for: the poll's own timeout then bounds the delay.
    private let wakeUp: (read: FileDescriptor, write: FileDescriptor)?

    /// `wakeUpPipe` false: no pipe, for a transfer on a `CurlEventLoop`, which the canceller wakes itself.
    init(wakeUpPipe: Bool = true) {
        wakeUp = wakeUpPipe ? try? FileDescriptor.pipe(nonBlocking: true) : nil
    }

    /// Read end of the wake-up pipe, polled beside curl's sockets; -1 without a pipe.
    var wakeDescriptor: Int32 { wakeUp?.read.rawValue ?? -1 }

    /// True once `cancel()` was called.
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Asks the transfer to stop; safe from any thread, any number of times.
    func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing), let wakeUp else { return }
        var byte: UInt8 = 1
        _ = write(wakeUp.write.rawValue, &byte, 1)
    }
}
