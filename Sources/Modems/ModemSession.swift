import CellpathCore
import CGIO
import CMBIM
import CQMI
import Glibc
import GLibRuntime
import ModemDiscovery

/// What a backend's calls share: the port, the deadline of the whole session, and how a failed
/// library call becomes a `ModemError`.
struct ModemSession: Sendable {
    let port: ControlPort
    let deadline: ContinuousClock.Instant
    let logger: Logger

    init(port: ControlPort, timeout: Duration, logger: Logger) {
        self.port = port
        deadline = .now + timeout
        self.logger = logger
    }

    /// Seconds left before the deadline.
    var secondsLeft: Double {
        let left = (deadline - .now).components
        return Double(left.seconds) + Double(left.attoseconds) / 1e18
    }

    /// The timeout to give the libraries' own calls: whole seconds, a second beyond ours, so
    /// that our timer (which reports the time limit correctly) fires first.
    var libraryTimeout: UInt32 { UInt32(max(1, min(3600, secondsLeft.rounded(.up) + 1))) }

    /// Runs one library call (see `GLibAsync.call`) with the time left; any failure becomes a
    /// `ModemError` about `operation` (`query the register state`).
    @GLibActor
    func call<Value>(_ operation: String, start: (GLibAsyncArguments) -> Void,
                     finish: (OpaquePointer) throws(GLibError) -> Value) async throws(ModemError) -> Value {
        let left = secondsLeft
        guard left > 0 else { throw timeout(operation, seconds: 0) }
        do {
            return try await GLibAsync.call(timeout: left, start: start, finish: finish)
        } catch {
            switch error {
            case .timedOut: throw timeout(operation, seconds: left)
            case .cancelled: throw ModemError(.transport, .cancelled, operation: describe(operation), reason: "cancelled")
            case .failed(let failure): throw self.error(operation, failure)
            }
        }
    }

    /// `query the register state` → `query the register state of cdc-wdm0`.
    func describe(_ operation: String) -> String { "\(operation) of \(port.name)" }

    func timeout(_ operation: String, seconds: Double) -> ModemError {
        ModemError(.transport, .temporary, operation: describe(operation),
                   reason: "no answer within \(Self.format(seconds)) s",
                   hint: "the modem may be busy or hung: retry, allow more time with --timeout, or replug it")
    }

    /// A library error as a `ModemError`: protocol statuses (MBIM status, MBIM function error,
    /// QMI error) on the protocol level, everything else on the transport level.
    func error(_ operation: String, _ failure: GLibError) -> ModemError {
        let operation = describe(operation)
        if failure.domain == mbim_status_error_quark() {
            let name = mbim_status_error_get_string(MbimStatusError(rawValue: UInt32(bitPattern: failure.code)))
                .map { String(cString: $0) } ?? "status \(failure.code)"
            return ModemError(.protocol, .unavailable, operation: operation, reason: "the modem answered \(name) (MBIM status)",
                              status: name)
        }
        if failure.domain == mbim_protocol_error_quark() {
            return ModemError(.protocol, .unavailable, operation: operation,
                              reason: "the modem answered with an MBIM function error: \(failure.message)")
        }
        if failure.domain == qmi_protocol_error_quark() {
            let name = qmi_protocol_error_get_string(QmiProtocolError(rawValue: UInt32(bitPattern: failure.code)))
                .map { String(cString: $0) } ?? "error \(failure.code)"
            return ModemError(.protocol, .unavailable, operation: operation, reason: "the modem answered \(name) (QMI error)",
                              status: name)
        }
        if (failure.domain == mbim_core_error_quark() && failure.code == Int32(MBIM_CORE_ERROR_TIMEOUT.rawValue))
            || (failure.domain == qmi_core_error_quark() && failure.code == Int32(QMI_CORE_ERROR_TIMEOUT.rawValue)) {
            return timeout(operation, seconds: secondsLeft)
        }
        if access(port.devicePath, F_OK) != 0 {
            return ModemError(.transport, .unavailable, operation: operation,
                              reason: "\(port.devicePath) vanished (the modem was unplugged or reset)",
                              hint: "check that the modem is still there: cellpath modems")
        }
        return ModemError(.transport, .unavailable, operation: operation, reason: failure.message)
    }

    /// `2`, `0.5`: seconds without trailing zeros.
    static func format(_ seconds: Double) -> String {
        let rounded = (seconds * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
