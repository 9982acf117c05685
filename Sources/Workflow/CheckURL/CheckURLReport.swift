import CellpathCore
import CellularHTTP

/// What opening a check_url produced: the engine's trace of the chain, the v0.2 callback it
/// ended with (the final body, or the redirect to `redirect_url` it stopped at), and why it
/// failed: the chain's own failure, or a final answer that is not a success.
public struct CheckURLReport: Sendable, Equatable, Codable {
    public var trace: FetchReport
    public var callback: CheckCallback?
    public var failure: CheckURLFailure?
    /// The network the first request's `x-tru-ops` named (MCC-MNC, as the path or the modem
    /// told it); nil when none was to be sent.
    public var operatorSent: String?

    /// The report of `trace`; `callback` is what the chain ended with, and the failure follows
    /// from both.
    public init(trace: FetchReport, callback: CheckCallback?) {
        self.trace = trace
        self.callback = callback
        if let failure = trace.failure {
            self.failure = CheckURLFailure(failure)
        } else if let result = trace.result {
            self.failure = CheckURLFailure(answer: result, lastHop: trace.hops.last, callback: callback)
        }
    }

    /// The callback a completed chain ended with: in its final body, or in the query of the
    /// redirect it stopped at (`--stop-at`, or the check's `redirect_url`).
    public static func callback(of trace: FetchReport) -> CheckCallback? {
        guard let result = trace.result else { return nil }
        return CheckCallback(recognizing: result.json) ?? result.stoppedAt.flatMap(CheckCallback.init(redirectURL:))
    }

    /// A copy safe to print or store: tokens, codes, assertions and cookies masked unless `.full`.
    public func redacted(_ disclosure: Disclosure) -> CheckURLReport {
        var copy = self
        copy.trace = trace.redacted(disclosure)
        if let code = callback?.code { copy.callback?.code = disclosure.reveal(code, as: .code) }
        return copy
    }

    /// Human-readable lines: the trace's (its hops unless `hops` is false), then the callback and the problem the server sent (a
    /// failure's message is the caller's to report).
    public func humanLines(_ disclosure: Disclosure, hops: Bool = true) -> [String] {
        var lines = trace.humanLines(disclosure, hops: hops)
        if let callback = redacted(disclosure).callback {
            var line = "[fetch] check_id=\(callback.checkID)"
            if let code = callback.code { line += " code=\(code)" }
            if let reference = callback.referenceID { line += " reference_id=\(reference)" }
            if let error = callback.error { line += " error=\(error)" }
            if let description = callback.errorDescription { line += " error_description=\(description)" }
            lines.append(line)
        }
        if let status = failure?.status, let problem = failure?.problem {
            let text = [problem.title, problem.detail].compactMap { $0 }.joined(separator: ": ")
            lines.append("[fetch] \(status) \(text)" + (problem.type.map { " (\($0))" } ?? ""))
        }
        return lines
    }
}
