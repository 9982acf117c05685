import CellpathCore
import Glibc
import Synchronization
import SystemSupport

/// Shows the step of a long operation with its elapsed time on stderr (`[  0.42s] fetching…`),
/// only when stderr is a terminal and not `--quiet`; prints nothing otherwise. On a terminal the
/// line is redrawn every 100 ms so that its time keeps counting; anything else written to the
/// terminal ends it first (`ProgressLine.end`). Safe from any thread.
package struct Progress: Sendable {
    package let enabled: Bool
    package let start: Double

    package init(enabled: Bool) {
        self.enabled = enabled
        start = MonotonicClock.now
    }

    /// Seconds since the operation started.
    package var elapsed: Double { MonotonicClock.elapsed(since: start) }

    /// Announces a step; its line counts on until the next step or other output.
    package func step(_ text: String) {
        guard enabled else { return }
        ProgressLine.show(text, since: start)
    }
}

/// The one progress line of the process (there is one stderr).
package enum ProgressLine {
    private struct State {
        var text: String?
        var start = 0.0
        var ticking = false
    }

    private static let state = Mutex(State())
    /// Microseconds between redraws.
    package static let interval: UInt32 = 100_000

    /// Draws `text` with the time since `start`, and keeps redrawing it.
    package static func show(_ text: String, since start: Double) {
        let startTicker = state.withLock { state -> Bool in
            if state.text != nil { try? IO.writeAll(2, "\n") }
            state.text = text
            state.start = start
            try? IO.writeAll(2, line(state))
            defer { state.ticking = true }
            return !state.ticking
        }
        guard startTicker else { return }
        do {
            try Threads.detach {
                while true {
                    usleep(interval)
                    let going = state.withLock { state -> Bool in
                        guard state.text != nil else {
                            state.ticking = false
                            return false
                        }
                        try? IO.writeAll(2, "\r" + line(state))
                        return true
                    }
                    if !going { return }
                }
            }
        } catch {
            state.withLock { $0.ticking = false }
        }
    }

    /// Ends the line being drawn, if any, so that other output starts on a line of its own.
    package static func end() {
        state.withLock { state in
            guard state.text != nil else { return }
            state.text = nil
            try? IO.writeAll(2, "\n")
        }
    }

    private static func line(_ state: State) -> String {
        let seconds = (MonotonicClock.elapsed(since: state.start) * 100).rounded() / 100
        var stamp = String(seconds)
        if let dot = stamp.firstIndex(of: ".") {
            let decimals = stamp.distance(from: dot, to: stamp.endIndex) - 1
            stamp += String(repeating: "0", count: max(0, 2 - decimals))
        }
        return "[\(String(repeating: " ", count: max(0, 6 - stamp.count)))\(stamp)s] \(state.text ?? "")"
    }
}
