import CellpathCore
import Glibc

/// A failed system call: the operation and its `errno`.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was attempted, e.g. `open /run/x` or `pthread_create`.
    public var operation: String
    /// The `errno` value (or a returned error number, as pthread functions give).
    public var code: Int32
    /// Why it failed in cellpath's words, when the C library's text for `code` would mislead.
    public var explanation: String?

    public init(_ operation: String, code: Int32 = errno, explanation: String? = nil) {
        self.operation = operation
        self.code = code
        self.explanation = explanation
    }

    /// `explanation`, else the C library's text for `code`, e.g. "No such file or directory".
    public var reason: String { explanation ?? Self.text(code) }

    public var description: String { "\(operation): \(reason)" }

    /// The C library's text for an errno value.
    public static func text(_ code: Int32) -> String {
        // The XSI strerror_r (what Swift sees) fills `buffer`; thread-safe, unlike strerror.
        var buffer = [CChar](repeating: 0, count: 256)
        guard strerror_r(code, &buffer, buffer.count) == 0 else { return "error \(code)" }
        return buffer.withUnsafeBufferPointer { String(validatingCString: $0.baseAddress!) } ?? "error \(code)"
    }
}

extension CellpathError {
    /// A system call failure as a cellpath error: `.permission` for EACCES/EPERM, else `kind`.
    public init(_ error: SystemError, kind: FailureKind = .unavailable, hint: String? = nil) {
        let permission = error.code == EACCES || error.code == EPERM
        self.init(permission ? .permission : kind, error.description, hint: hint)
    }
}
