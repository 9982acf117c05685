import CellpathCore
import Modems
import Synchronization
import TestSupport

extension SimulatedFleet {
    /// Reads modem `index` directly (no proxy) within `timeout`.
    func status(
        _ index: Int, timeout: Duration = .seconds(10), logger: Logger = .silent
    ) async throws(ModemError) -> ModemStatus {
        try await ModemStatusReader(access: ModemAccess(useProxy: false, timeout: timeout), logger: logger).status(
            of: modems[index])
    }
}

/// Collects log lines, for tests that check what was logged.
final class LogLines: LogSink {
    private let lines = Mutex<[String]>([])

    func write(line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }

    /// A logger at `threshold` writing here.
    func logger(_ threshold: LogLevel = .debug) -> Logger { Logger(threshold: threshold, sink: self) }
}
