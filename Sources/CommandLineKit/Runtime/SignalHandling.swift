import CellpathCore
import Glibc
import SystemSupport

/// SIGINT/SIGTERM policy of the commands, on the shared `SignalWatcher`: the first signal
/// cancels the running task (whose clean-up then runs: the HTTP engine closes its connections
/// safely, a bearer this run brought up is torn down); a second one runs the `EmergencyExit`
/// hooks (the HTTP engine's abortive close of bearer-bound sockets) and exits with 130.
enum SignalHandling {
    /// Installs the policy; `cancel` is called once, on the first signal, from the watcher thread.
    /// Stop the returned watcher when the command is over. Throws when the watcher cannot be
    /// installed: a command that Ctrl-C could not cancel must not start.
    /// With `jsonLines` (a command whose stderr is a JSON log) the first signal's notice is a
    /// JSON line: `{"event":"cancelling","signal":"SIGTERM"}`.
    static func install(
        jsonLines: Bool = false, cancel: @escaping @Sendable () -> Void
    ) throws(CellpathError) -> SignalWatcher {
        do {
            return try watcher(jsonLines: jsonLines, cancel: cancel)
        } catch {
            throw CellpathError(.internalError, "couldn't watch for Ctrl-C (SIGINT, SIGTERM): \(error.description)")
        }
    }

    private static func watcher(
        jsonLines: Bool, cancel: @escaping @Sendable () -> Void
    ) throws(SystemError) -> SignalWatcher {
        try SignalWatcher { signal, count in
            if count == 1 {
                if jsonLines {
                    let name = signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : "signal \(signal)"
                    Terminal.writeErr(
                        JSONValue.object([("event", .string("cancelling")), ("signal", .string(name))]).serialized
                            + "\n")
                } else {
                    Terminal.writeErr("\ncancelling… (press Ctrl-C again to exit now)\n")
                }
                cancel()
            } else {
                EmergencyExit.exit(ExitCode.cancelled.rawValue)
            }
        }
    }
}
