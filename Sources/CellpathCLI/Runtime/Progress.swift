import CellpathCore
import SystemSupport

/// Shows the steps of a long operation with elapsed time on stderr (`[ 0.42s] connecting…`),
/// only when stderr is a terminal and not `--quiet`; prints nothing otherwise. Safe from any thread.
package struct Progress: Sendable {
    let enabled: Bool
    let start: Double

    init(enabled: Bool) {
        self.enabled = enabled
        start = MonotonicClock.now
    }

    /// Seconds since the operation started.
    var elapsed: Double { MonotonicClock.elapsed(since: start) }

    /// Announces a step.
    package func step(_ text: String) {
        guard enabled else { return }
        let seconds = (elapsed * 100).rounded() / 100
        var stamp = String(seconds)
        if let dot = stamp.firstIndex(of: ".") {
            let decimals = stamp.distance(from: dot, to: stamp.endIndex) - 1
            stamp += String(repeating: "0", count: max(0, 2 - decimals))
        }
        Terminal.writeErr("[\(String(repeating: " ", count: max(0, 6 - stamp.count)))\(stamp)s] \(text)\n")
    }
}
