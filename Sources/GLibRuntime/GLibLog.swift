import CGIO
import CellpathCore
import Synchronization

/// GLib's log lines (libmbim's domain `Mbim`, libqmi's `Qmi`, GLib's own), sent to a Swift
/// handler instead of GLib's default handler, which writes to stderr. Any thread.
public enum GLibLog {
    /// Receives each line's level, domain and text (GLib's levels folded into cellpath's).
    public typealias Handler = @Sendable (_ level: LogLevel, _ domain: String?, _ message: String) -> Void

    private static let handler = Mutex<Handler?>(nil)

    /// Sends every later log line to `handler` (replacing an earlier one).
    public static func route(_ handler: @escaping Handler) {
        let first = Self.handler.withLock { current in
            defer { current = handler }
            return current == nil
        }
        if first { g_log_set_default_handler(forward, nil) }
    }

    fileprivate static func deliver(_ level: LogLevel, _ domain: String?, _ message: String) {
        handler.withLock { $0 }?(level, domain, message)
    }
}

/// The GLogFunc installed as GLib's default handler.
private func forward(
    _ domain: UnsafePointer<gchar>?, _ flags: GLogLevelFlags, _ message: UnsafePointer<gchar>?,
    _ userData: gpointer?
) {
    let bits = flags.rawValue
    let level: LogLevel
    if bits & (G_LOG_LEVEL_ERROR.rawValue | G_LOG_LEVEL_CRITICAL.rawValue | G_LOG_LEVEL_WARNING.rawValue) != 0 {
        level = .warning
    } else if bits & (G_LOG_LEVEL_MESSAGE.rawValue | G_LOG_LEVEL_INFO.rawValue) != 0 {
        level = .info
    } else {
        level = .debug
    }
    GLibLog.deliver(level, domain.map { String(cString: $0) }, message.map { String(cString: $0) } ?? "")
}
