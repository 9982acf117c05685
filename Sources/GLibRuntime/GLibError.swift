import CGIO

/// A GError, copied into Swift (and the GError freed): its domain, code and message.
package struct GLibError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error domain's quark (`mbim_status_error_quark()`, `G_IO_ERROR`…).
    package var domain: GQuark
    package var code: Int32
    package var message: String

    package init(domain: GQuark, code: Int32, message: String) {
        self.domain = domain
        self.code = code
        self.message = message
    }

    /// Takes over a GError set by a C call (and frees it); a call that failed without setting
    /// one becomes an error of domain 0.
    package init(taking error: UnsafeMutablePointer<GError>?) {
        guard let error else {
            self.init(domain: 0, code: 0, message: "failed without an error message")
            return
        }
        defer { g_error_free(error) }
        self.init(
            domain: error.pointee.domain, code: error.pointee.code,
            message: error.pointee.message.map { String(cString: $0) } ?? "")
    }

    /// The domain's name (`g-io-error-quark`).
    package var domainName: String { g_quark_to_string(domain).map { String(cString: $0) } ?? "?" }

    package var description: String { "\(message) (\(domainName) \(code))" }

    /// True for `G_IO_ERROR_CANCELLED`, what a call reports when its GCancellable was cancelled.
    package var isCancellation: Bool { domain == g_io_error_quark() && code == Int32(G_IO_ERROR_CANCELLED.rawValue) }
}

/// How a bridged GLib call failed.
package enum GLibCallError: Error, Sendable, Equatable {
    /// No completion within the call's time limit (the call was cancelled).
    case timedOut(seconds: Double)
    /// The Swift task was cancelled (and the call with it).
    case cancelled
    /// The call's group was aborted: the object it talks to went away.
    case aborted
    /// The call completed with an error.
    case failed(GLibError)
}
