import CellpathCore
import SystemSupport

/// cellpath's exit codes (sysexits-style above 63). Documented in the README and in `--help`.
package enum ExitCode: Int32, Sendable, CaseIterable {
    /// Success; for checks: the number is verified.
    case success = 0
    /// Checked, not verified (the SIM's number does not match).
    case notVerified = 1
    /// Verified, but the SIM changed within the period.
    case simChanged = 2
    case usage = 64
    case dataError = 65
    case noInput = 66
    case noHost = 68
    case unavailable = 69
    case internalError = 70
    case cannotCreate = 73
    case temporaryFailure = 75
    case protocolError = 76
    case permissionDenied = 77
    case configuration = 78
    /// Interrupted by SIGINT/SIGTERM after clean-up (128 + SIGINT).
    case cancelled = 130

    /// One line per code for `--help` and the README.
    package var meaning: String {
        switch self {
        case .success: "verified (or the command succeeded)"
        case .notVerified: "checked, not verified"
        case .simChanged: "verified, but the SIM changed within the period"
        case .usage: "usage error (unknown option, missing argument)"
        case .dataError: "bad input data (e.g. an invalid phone number or scenario file)"
        case .noInput: "an input file cannot be read (e.g. --cacert)"
        case .noHost: "host unknown: the DNS says the name does not exist"
        case .unavailable: "unavailable: no modem, no bearer, operator not supported"
        case .internalError: "internal error"
        case .cannotCreate: "an output file cannot be written (e.g. --har)"
        case .temporaryFailure: "temporary failure: timeout, rate limit; retry later"
        case .protocolError: "protocol error: a server's answer is not valid HTTP"
        case .permissionDenied: "permission denied (run as root or join the device group)"
        case .configuration: "configuration error (a config file or setting is wrong)"
        case .cancelled: "cancelled by SIGINT/SIGTERM"
        }
    }

    /// The one mapping from errors to exit codes.
    package static func forError(_ error: any Error) -> ExitCode {
        switch error {
        case is UsageError: return .usage
        case let error as CellpathError: return forKind(error.kind)
        case let error as SystemError: return forKind(CellpathError(error).kind)
        case is CancellationError: return .cancelled
        default: return .internalError
        }
    }

    package static func forKind(_ kind: FailureKind) -> ExitCode {
        switch kind {
        case .usage: .usage
        case .dataError: .dataError
        case .noInput: .noInput
        case .unavailable: .unavailable
        case .noHost: .noHost
        case .protocolError: .protocolError
        case .internalError: .internalError
        case .cannotCreate: .cannotCreate
        case .temporary: .temporaryFailure
        case .permission: .permissionDenied
        case .configuration: .configuration
        case .cancelled: .cancelled
        }
    }
}
