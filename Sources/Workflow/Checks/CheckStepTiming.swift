/// When one step of a check ran, in milliseconds from the start of the run.
public struct CheckStepTiming: Sendable, Equatable, Codable {
    /// `path` (the bearer), `create`, `check_url`, `complete`, `sim_check`, `coverage`.
    public var step: String
    public var startMs: Double
    public var durationMs: Double
    /// False when the step failed.
    public var succeeded: Bool

    public init(step: String, startMs: Double, durationMs: Double, succeeded: Bool) {
        self.step = step
        self.startMs = startMs
        self.durationMs = durationMs
        self.succeeded = succeeded
    }
}

/// Measures steps against one start instant. Not shared across tasks: each step reports its own.
struct StepClock: Sendable {
    let start = ContinuousClock.now

    /// Milliseconds since the start.
    func now() -> Double { Self.ms(ContinuousClock.now - start) }

    /// The timing of a step that started at `startMs` and ends now.
    func timing(_ step: String, since startMs: Double, succeeded: Bool) -> CheckStepTiming {
        CheckStepTiming(
            step: step, startMs: startMs, durationMs: (now() - startMs).rounded(toPlaces: 1), succeeded: succeeded)
    }

    static func ms(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return (Double(seconds) * 1000 + Double(attoseconds) / 1e15).rounded(toPlaces: 1)
    }
}

extension Double {
    fileprivate func rounded(toPlaces places: Int) -> Double {
        var scale = 1.0
        for _ in 0 ..< places { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}
