/// Why talking to a modem failed, on one of two levels: the transport (the control port cannot
/// be opened, no answer in time, the port vanished) or the protocol (the modem answered with an
/// MBIM status or a QMI error). Shown as `couldn't <operation>: <reason>`.
public struct ModemError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Layer: String, Sendable, Equatable {
        case transport
        case `protocol`
    }

    public var layer: Layer
    /// The exit code's category: `.temporary` for timeouts, `.permission` for a port that may
    /// not be opened, `.unavailable` otherwise.
    public var kind: FailureKind
    /// What failed, as a verb phrase: `query the register state of cdc-wdm0`.
    public var operation: String
    public var reason: String
    public var hint: String?
    /// For protocol errors: the status the modem answered, as the library names it
    /// (`sim-not-inserted`, `PinRestriction`).
    public var status: String?

    public init(
        _ layer: Layer, _ kind: FailureKind, operation: String, reason: String, hint: String? = nil,
        status: String? = nil
    ) {
        self.layer = layer
        self.kind = kind
        self.operation = operation
        self.reason = reason
        self.hint = hint
        self.status = status
    }

    public var message: String { "couldn't \(operation): \(reason)" }

    public var description: String { message }

    /// The error as the command line reports it.
    public var cellpathError: CellpathError { CellpathError(kind, message, hint: hint) }
}
