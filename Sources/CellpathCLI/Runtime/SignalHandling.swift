import Dispatch
import Glibc

/// SIGINT/SIGTERM policy: the first signal cancels the running task (whose clean-up then
/// runs); a second one exits at once with code 130.
final class SignalHandling: @unchecked Sendable {
    /// Immutable after init; only cancelled in deinit.
    private let sources: [any DispatchSourceSignal]

    /// Installs the handlers; `cancel` is called once, on the first signal, from a dispatch queue.
    init(cancel: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "cellpath.signals")
        let state = SignalCount()
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if state.increment() == 1 {
                    Terminal.writeErr("\ncancelling… (press Ctrl-C again to exit now)\n")
                    cancel()
                } else {
                    _exit(ExitCode.cancelled.rawValue)
                }
            }
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

/// Counts signals; only touched on the signal queue.
private final class SignalCount: @unchecked Sendable {
    private var count = 0
    func increment() -> Int {
        count += 1
        return count
    }
}
