import CGIO
import CMBIM
import CQMI
import CellpathCore
import GLibRuntime
import Glibc
import ModemDiscovery

/// What a backend's calls share: the port, the deadline of the whole session, and how a failed
/// library call becomes a `ModemError`.
struct ModemSession: Sendable {
    let port: ControlPort
    /// The whole session's time limit, and when it runs out.
    let timeout: Duration
    let deadline: ContinuousClock.Instant
    let logger: Logger
    /// Whether the port is opened through its proxy (else directly).
    let proxied: Bool
    /// The session's calls in flight, aborted when the port goes away.
    let calls: GLibCallGroup
    /// A clean-up session's calls are not cancelled with the task: they undo what must not be
    /// left behind, also (and above all) after a Ctrl-C.
    let isCleanup: Bool

    init(
        port: ControlPort, timeout: Duration, logger: Logger, proxied: Bool, calls: GLibCallGroup = GLibCallGroup(),
        isCleanup: Bool = false
    ) {
        self.port = port
        self.timeout = timeout
        deadline = .now + timeout
        self.logger = logger
        self.proxied = proxied
        self.calls = calls
        self.isCleanup = isCleanup
    }

    /// The same session with `timeout` from now: for clean-up (a disconnect after a cancel or
    /// after the deadline), whose calls run to their end or that time limit. They share the
    /// session's call group, so a port that vanishes ends them too.
    func cleanup(timeout: Duration = ModemSession.cleanupTimeout) -> ModemSession {
        ModemSession(port: port, timeout: timeout, logger: logger, proxied: proxied, calls: calls, isCleanup: true)
    }

    /// The same session with its whole time limit again, from now.
    func renewed() -> ModemSession {
        ModemSession(port: port, timeout: timeout, logger: logger, proxied: proxied, calls: calls, isCleanup: isCleanup)
    }

    /// The time that undoing may take, whatever is left of the session's: a bearer or a client
    /// ID left behind stays in the modem.
    static let cleanupTimeout = Duration.seconds(5)

    /// Seconds left before the deadline.
    var secondsLeft: Double { Self.seconds(deadline - .now) }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// The timeout to give the libraries' own calls: whole seconds, a second beyond ours, so
    /// that our timer (which reports the time limit correctly) fires first.
    var libraryTimeout: UInt32 { libraryTimeout(allowing: .zero) }

    /// The libraries' timeout for a call that may run `extraTime` past the deadline.
    func libraryTimeout(allowing extraTime: Duration) -> UInt32 {
        UInt32(max(1, min(3600, (secondsLeft + Self.seconds(extraTime)).rounded(.up) + 1)))
    }

    /// Runs one library call (see `GLibAsync.call`) with the time left; any failure becomes a
    /// `ModemError` about `operation` (`query the register state`). With `extraTime`, the call
    /// may run that long past the deadline and is not cancelled with the task: for calls whose
    /// result must be released (a QMI client ID); the caller checks the deadline afterwards.
    /// Nor are the calls of a clean-up session.
    @GLibActor
    func call<Value>(
        _ operation: String, extraTime: Duration? = nil, start: (GLibAsyncArguments) -> Void,
        finish: (OpaquePointer) throws(GLibError) -> Value
    ) async throws(ModemError) -> Value {
        let left = secondsLeft + (extraTime.map(Self.seconds) ?? 0)
        guard left > 0 else { throw timedOut(operation) }
        do {
            return try await GLibAsync.call(
                timeout: left, followingTask: extraTime == nil && !isCleanup, group: calls,
                start: start, finish: finish)
        } catch {
            switch error {
            case .cancelled: throw cancelled(operation)
            case .aborted: throw vanished(operation)
            case _ where access(port.devicePath, F_OK) != 0: throw vanished(operation)
            case .timedOut: throw timedOut(operation)
            case .failed(let failure): throw self.error(operation, failure)
            }
        }
    }

    /// The operation with the port: `open` → `open cdc-wdm0`, `open through mbim-proxy` → `open
    /// cdc-wdm0 through mbim-proxy`, `allocate a DMS client ID` → `allocate a DMS client ID on
    /// cdc-wdm0`, `query the register state` → `query the register state of cdc-wdm0`.
    func describe(_ operation: String) -> String {
        for verb in ["open", "close"] where operation == verb || operation.hasPrefix(verb + " ") {
            return "\(verb) \(port.name)\(operation.dropFirst(verb.count))"
        }
        if operation.hasPrefix("allocate ") || operation.hasPrefix("release ") { return "\(operation) on \(port.name)" }
        return "\(operation) of \(port.name)"
    }

    /// The port hung up or its device node is gone.
    func vanished(_ operation: String) -> ModemError {
        ModemError(
            .transport, .unavailable, operation: describe(operation),
            reason: "\(port.devicePath) vanished (the modem was unplugged or reset)",
            hint: "check that the modem is still there: cellpath modems")
    }

    /// The session's time is up: `no answer within 2 s`, counting from the session's start.
    /// Opened directly, the answers may have gone to another reader of the port.
    /// `operation` given up because the task was cancelled.
    func cancelled(_ operation: String) -> ModemError {
        ModemError(.transport, .cancelled, operation: describe(operation), reason: "cancelled")
    }

    func timedOut(_ operation: String) -> ModemError {
        ModemError(
            .transport, .temporary, operation: describe(operation),
            reason: "no answer within \(Self.format(Self.seconds(timeout))) s",
            hint: proxied
                ? "the modem may be busy or hung: retry, allow more time with --timeout, or replug it"
                : "another program may be reading the port (ModemManager, mbim-proxy, qmi-proxy) and take the answers: "
                    + "open it through the proxy (as root, without --no-proxy); or the modem is busy or hung: retry, "
                    + "allow more time with --timeout, or replug it")
    }

    /// A library error as a `ModemError`: protocol statuses (MBIM status, MBIM function error,
    /// QMI error) on the protocol level, everything else on the transport level.
    func error(_ operation: String, _ failure: GLibError) -> ModemError {
        if (failure.domain == mbim_core_error_quark() && failure.code == Int32(MBIM_CORE_ERROR_TIMEOUT.rawValue))
            || (failure.domain == qmi_core_error_quark() && failure.code == Int32(QMI_CORE_ERROR_TIMEOUT.rawValue))
        {
            return timedOut(operation)
        }
        let described = describe(operation)
        if failure.domain == mbim_status_error_quark() {
            let name =
                mbim_status_error_get_string(MbimStatusError(rawValue: UInt32(bitPattern: failure.code)))
                .map { String(cString: $0) } ?? "status \(failure.code)"
            return ModemError(
                .protocol, .unavailable, operation: described, reason: "the modem answered \(name) (MBIM status)",
                status: name)
        }
        if failure.domain == mbim_protocol_error_quark() {
            return ModemError(
                .protocol, .unavailable, operation: described,
                reason: "the modem answered with an MBIM function error: \(failure.message)")
        }
        if failure.domain == qmi_protocol_error_quark() {
            let name =
                qmi_protocol_error_get_string(QmiProtocolError(rawValue: UInt32(bitPattern: failure.code)))
                .map { String(cString: $0) } ?? "error \(failure.code)"
            return ModemError(
                .protocol, .unavailable, operation: described, reason: "the modem answered \(name) (QMI error)",
                status: name)
        }
        return ModemError(.transport, .unavailable, operation: described, reason: failure.message)
    }

    /// `2`, `0.5`: seconds without trailing zeros.
    static func format(_ seconds: Double) -> String {
        let rounded = (seconds * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
