/// A duration in milliseconds, to the microsecond.
func milliseconds(_ d: Duration) -> Double {
    microseconds(Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
}

/// Milliseconds rounded to the microsecond, so that traces print `80.914`, not `80.91399999999996`.
func microseconds(_ ms: Double) -> Double {
    (ms * 1000).rounded() / 1000
}

/// `5 s`, `0.5 s`: a duration for messages.
func seconds(_ d: Duration) -> String {
    let ms = milliseconds(d)
    return ms.truncatingRemainder(dividingBy: 1000) == 0 ? "\(Int(ms / 1000)) s" : "\(ms / 1000) s"
}
