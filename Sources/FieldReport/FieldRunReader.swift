import CellpathCore
import Glibc
import SystemSupport

/// Reads JSON Lines of field runs as a stream: one line at a time, never the whole file, so that
/// a night of runs costs the memory of one line. Blocking; any thread.
package enum FieldRunReader {
    /// What a file held besides its checks.
    package struct Tally: Sendable, Equatable {
        /// The checks read.
        package var checks = 0
        /// The runs' summary lines skipped (the report computes its own from the checks).
        package var summaries = 0
        /// Whether the last line was cut short (no newline, not JSON: a run stopped by Ctrl-C
        /// or a power loss) and so left out.
        package var partialLastLine = false
        /// The bytes up to the end of the last line that ends with a newline: where a resumed run
        /// appends after cutting a partial last line off.
        package var wholeLinesLength = 0
    }

    /// The longest line accepted: a check's record with its whole check_url trace is a few KiB.
    static let maximumLineBytes = 16 << 20

    /// Reads `fd` to its end and hands each check to `handle`, in order. `name` is how errors
    /// name the input (a path, or `stdin`). A line that is not JSON, or JSON that is not a field
    /// run's line, is a data error naming the file and the line, never quoting it (it may hold
    /// personal data); empty lines are skipped.
    package static func read(
        _ fd: Int32, name: String, _ handle: (FieldRecord) throws(CellpathError) -> Void
    ) throws(CellpathError) -> Tally {
        var tally = Tally()
        var pending: [UInt8] = []
        var lineNumber = 0
        var consumed = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        func take(_ line: ArraySlice<UInt8>, isLast: Bool) throws(CellpathError) {
            lineNumber += 1
            guard line.contains(where: { !Self.isWhitespace($0) }) else { return }
            let parsed: JSONValue
            do {
                parsed = JSONValue(node: try StrictJSONParser.parse(Array(line)))
            } catch {
                if isLast {
                    tally.partialLastLine = true
                    return
                }
                throw CellpathError(
                    .dataError, "\(name), line \(lineNumber): not valid JSON (column \(error.position.column))",
                    hint: "each line must be one JSON object written by a field run (--repeat N --json)")
            }
            switch FieldRecord.line(parsed) {
            case .check(let record):
                tally.checks += 1
                try handle(record)
            case .summary: tally.summaries += 1
            case nil:
                throw CellpathError(
                    .dataError, "\(name), line \(lineNumber): not a field run's record (no product and steps)",
                    hint: "each line must be one JSON object written by a field run (--repeat N --json)")
            }
        }
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw CellpathError(SystemError("couldn't read \(name)"), kind: .noInput)
            }
            if count == 0 { break }
            var start = 0
            for index in 0 ..< count where buffer[index] == UInt8(ascii: "\n") {
                if pending.isEmpty {
                    try take(buffer[start ..< index], isLast: false)
                } else {
                    pending += buffer[start ..< index]
                    try take(pending[...], isLast: false)
                    pending.removeAll(keepingCapacity: true)
                }
                start = index + 1
                tally.wholeLinesLength = consumed + start
            }
            consumed += count
            pending += buffer[start ..< count]
            guard pending.count <= maximumLineBytes else {
                throw CellpathError(
                    .dataError, "\(name), line \(lineNumber + 1): longer than \(maximumLineBytes >> 20) MiB",
                    hint: "each line must be one JSON object written by a field run (--repeat N --json)")
            }
        }
        if !pending.isEmpty { try take(pending[...], isLast: true) }
        return tally
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }
}
