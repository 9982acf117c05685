/// The category of a failure; the command line maps each to one exit code.
public enum FailureKind: String, Sendable, Codable, CaseIterable {
    /// The command line itself is wrong (unknown option, missing argument).
    case usage
    /// Input data is malformed or invalid (a phone number, a scenario file, a URL).
    case dataError
    /// An input file cannot be read (missing, unreadable).
    case noInput
    /// A needed resource is missing: no modem, no bearer, operator not supported.
    case unavailable
    /// A host name that does not exist: the DNS said so (NXDOMAIN).
    case noHost
    /// A server answered with something that breaks its protocol (not HTTP, an oversized header).
    case protocolError
    /// A bug or an impossible state inside cellpath.
    case internalError
    /// Transient: a timeout, a busy server; retrying later may succeed.
    case temporary
    /// An output file cannot be created or written.
    case cannotCreate
    /// The caller lacks a permission (root, device group, file mode).
    case permission
    /// A configuration file or setting is wrong.
    case configuration
    /// The operation was cancelled (SIGINT/SIGTERM).
    case cancelled
}

/// The one error type that crosses module boundaries: a category, a message for the user,
/// and an optional hint on what to do next.
public struct CellpathError: Error, Sendable, Equatable, CustomStringConvertible {
    public var kind: FailureKind
    public var message: String
    public var hint: String?

    public init(_ kind: FailureKind, _ message: String, hint: String? = nil) {
        self.kind = kind
        self.message = message
        self.hint = hint
    }

    public var description: String { message }
}
