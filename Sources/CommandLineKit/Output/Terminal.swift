import CellpathCore
import Glibc
import SystemSupport

/// Standard output and standard error: whole-buffer writes (Glibc's `stdout`/`stderr`
/// globals are not concurrency-safe in Swift 6) and TTY detection.
package enum Terminal {
    /// Writes `text` to stdout; a closed or broken stdout is ignored (like `head` closing a pipe).
    /// A progress line on the same terminal is ended first.
    package static func writeOut(_ text: String) {
        if stdoutIsTTY { ProgressLine.end() }
        try? IO.writeAll(1, text)
    }

    /// Writes `text` to stderr, after ending the progress line.
    package static func writeErr(_ text: String) {
        ProgressLine.end()
        try? IO.writeAll(2, text)
    }

    package static var stdoutIsTTY: Bool { isatty(1) == 1 }
    package static var stderrIsTTY: Bool { isatty(2) == 1 }
}

/// `--color auto|always|never`.
package enum ColorMode: String, Sendable, CaseIterable {
    case auto, always, never

    /// Whether to colour a stream, given whether it is a terminal and `NO_COLOR`.
    package func enabled(isTTY: Bool, environment: [String: String]) -> Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .auto: return isTTY && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
        }
    }
}

/// The CLI's log lines: on stderr, after ending the progress line.
package struct TerminalLogSink: LogSink {
    package func write(line: String) { Terminal.writeErr(line + "\n") }
}

/// The log lines of a command whose stderr is a JSON log (`serve`): each line one JSON object,
/// `{"event":"log","message":"warning: …"}`.
package struct JSONLinesLogSink: LogSink {
    package func write(line: String) {
        Terminal.writeErr(JSONValue.object([("event", .string("log")), ("message", .string(line))]).serialized + "\n")
    }

    /// A command's failure as a line of such a log: `{"event":"error","message":…,"hint":…}`.
    package static func errorLine(_ error: CellpathError) -> String {
        JSONValue.object([
            ("event", .string("error")), ("message", .string(error.message)),
            ("hint", error.hint.map(JSONValue.string) ?? .null)
        ]).serialized + "\n"
    }
}

/// ANSI styles used by the human renderer.
package enum Style: String {
    case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", cyan = "36"

    package func apply(_ text: String, enabled: Bool) -> String {
        enabled ? "\u{1B}[\(rawValue)m\(text)\u{1B}[0m" : text
    }
}
