import Glibc
import Synchronization

/// Severity of a log line; a logger prints lines at or above its threshold.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug, info, warning, error

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }

    var label: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }
}

/// Where log lines go. The default writes whole lines to stderr with one `write(2)` each,
/// so lines from several threads never interleave.
public protocol LogSink: Sendable {
    func write(line: String)
}

/// Writes each line to standard error.
public struct StandardErrorSink: LogSink {
    public init() {}
    public func write(line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { if errno == EINTR { continue } else { return } }
                offset += n
            }
        }
    }
}

/// A leveled logger with an object prefix (`[modem0/bearer] …`) that masks personal data
/// unless its disclosure is `.full`, and escapes control characters (one line per message). Value type: scoping returns a new logger; safe from any thread.
public struct Logger: Sendable {
    public let threshold: LogLevel
    public let disclosure: Disclosure
    public let scope: String?
    let sink: any LogSink
    /// Keeps every warning, printed or not (`--quiet`), for a command's JSON output.
    public let warnings: WarningRecorder?

    public init(
        threshold: LogLevel = .warning, disclosure: Disclosure = .redacted,
        scope: String? = nil, sink: any LogSink = StandardErrorSink(), warnings: WarningRecorder? = nil
    ) {
        self.threshold = threshold
        self.disclosure = disclosure
        self.scope = scope
        self.sink = sink
        self.warnings = warnings
    }

    /// A logger for a sub-object: `logger.scoped("bearer")` under `modem0` prints `[modem0/bearer]`.
    public func scoped(_ name: String) -> Logger {
        Logger(
            threshold: threshold, disclosure: disclosure,
            scope: scope.map { "\($0)/\(name)" } ?? name, sink: sink, warnings: warnings)
    }

    /// True when lines at `level` are printed (to skip building expensive messages).
    public func enabled(_ level: LogLevel) -> Bool { level >= threshold }

    public func log(_ level: LogLevel, _ message: LogMessage) {
        if level == .warning, let warnings { warnings.record(message.rendered(disclosure)) }
        guard enabled(level) else { return }
        write(level, message)
    }

    /// A warning that `--quiet` does not hide (what the user must see, such as a secret sent
    /// without TLS): printed whatever the threshold.
    public func unsuppressibleWarning(_ message: LogMessage) {
        warnings?.record(message.rendered(disclosure))
        write(.warning, message)
    }

    private func write(_ level: LogLevel, _ message: LogMessage) {
        let prefix = scope.map { "[\($0)] " } ?? ""
        sink.write(line: "\(level.label): \(prefix)\(message.rendered(disclosure).terminalSafe)")
    }

    public func debug(_ message: LogMessage) { log(.debug, message) }
    public func info(_ message: LogMessage) { log(.info, message) }
    public func warning(_ message: LogMessage) { log(.warning, message) }
    public func error(_ message: LogMessage) { log(.error, message) }

    /// A logger that prints nothing.
    public static let silent = Logger(threshold: .error, sink: NullSink())
}

/// The warnings logged during one command, in order; safe from any thread.
public final class WarningRecorder: Sendable {
    private let recorded = Mutex<[String]>([])

    public init() {}

    func record(_ warning: String) { recorded.withLock { $0.append(warning) } }

    public var all: [String] { recorded.withLock { $0 } }
}

/// Discards every line.
struct NullSink: LogSink {
    func write(line: String) {}
}
