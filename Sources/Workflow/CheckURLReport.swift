import CellpathCore
import CellularHTTP

/// What opening a check_url produced: the engine's trace of the chain and the v0.2 callback
/// its final body carries, if any.
public struct CheckURLReport: Sendable, Equatable, Codable {
    public var trace: FetchReport
    public var callback: CheckCallback?

    public init(trace: FetchReport, callback: CheckCallback?) {
        self.trace = trace
        self.callback = callback
    }

    /// A copy safe to print or store: tokens, codes and cookies masked unless `.full`.
    public func redacted(_ disclosure: Disclosure) -> CheckURLReport {
        var copy = CheckURLReport(trace: trace.redacted(disclosure), callback: callback)
        if let code = callback?.code { copy.callback?.code = disclosure.reveal(code, as: .code) }
        return copy
    }

    /// Human-readable lines: the trace's, then the callback (a failure is the caller's to report).
    public func humanLines(_ disclosure: Disclosure) -> [String] {
        var lines = trace.humanLines(disclosure)
        guard trace.result != nil, let callback = redacted(disclosure).callback else { return lines }
        var line = "[fetch] check_id=\(callback.checkID)"
        if let code = callback.code { line += " code=\(code)" }
        if let reference = callback.referenceID { line += " reference_id=\(reference)" }
        if let error = callback.error { line += " error=\(error)" }
        lines.append(line)
        return lines
    }
}
