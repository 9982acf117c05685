import CellpathCore
import GLibRuntime
import Modems

/// What a ModemManager backend's calls share: the modem's name in messages, the deadline of the
/// whole session, and how a failed D-Bus call becomes a `ModemError`.
struct ModemManagerSession: Sendable {
    /// The modem's control port (`cdc-wdm0`), as messages name it.
    let modem: String
    let timeout: Duration
    let deadline: ContinuousClock.Instant
    let logger: Logger
    /// A clean-up session's calls are not cancelled with the task: they undo what must not be
    /// left behind, also after a Ctrl-C.
    let isCleanup: Bool

    init(modem: String, timeout: Duration, logger: Logger, isCleanup: Bool = false) {
        self.modem = modem
        self.timeout = timeout
        deadline = .now + timeout
        self.logger = logger
        self.isCleanup = isCleanup
    }

    /// The time that undoing may take, whatever is left of the session's.
    static let cleanupTimeout = Duration.seconds(10)

    /// The same session with a time of its own, for clean-up.
    func cleanup() -> ModemManagerSession {
        ModemManagerSession(modem: modem, timeout: Self.cleanupTimeout, logger: logger, isCleanup: true)
    }

    /// The same session with its whole time limit again, from now.
    func renewed() -> ModemManagerSession {
        ModemManagerSession(modem: modem, timeout: timeout, logger: logger, isCleanup: isCleanup)
    }

    var secondsLeft: Double { Self.seconds(deadline - .now) }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// Runs one libmm-glib (GDBus) call with the time left; a failure becomes a `ModemError`
    /// about `operation` (`connect the bearer`). With `followingTask` false (or in a clean-up
    /// session) the call is not cancelled with the task: ModemManager may carry it out anyway,
    /// and what it did must be known.
    @GLibActor
    func call<Value>(
        _ operation: String, followingTask: Bool = true, start: (GLibAsyncArguments) -> Void,
        finish: (OpaquePointer) throws(GLibError) -> Value
    ) async throws(ModemError) -> Value {
        let left = secondsLeft
        guard left > 0 else { throw timedOut(operation) }
        do {
            return try await GLibAsync.call(
                timeout: left, followingTask: followingTask && !isCleanup, start: start, finish: finish)
        } catch {
            switch error {
            case .cancelled:
                throw ModemError(.transport, .cancelled, operation: describe(operation), reason: "cancelled")
            case .aborted, .timedOut:
                throw timedOut(operation)
            case .failed(let failure):
                throw ModemManagerErrors.error(describe(operation), failure)
            }
        }
    }

    /// `connect the bearer` → `connect the bearer of cdc-wdm0 through ModemManager`; as it is
    /// for a session of no modem (the bus, the manager).
    func describe(_ operation: String) -> String {
        modem.isEmpty ? operation : "\(operation) of \(modem) through ModemManager"
    }

    func timedOut(_ operation: String) -> ModemError {
        ModemError(
            .transport, .temporary, operation: describe(operation),
            reason: "no answer from ModemManager within \(Int(Self.seconds(timeout).rounded(.up))) s",
            hint: "ModemManager or the modem may be busy: retry, or allow more time with --timeout")
    }
}
