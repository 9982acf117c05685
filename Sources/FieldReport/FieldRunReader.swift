import CellpathCore
import Dispatch
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

    /// Lines parsed together, split between the cores: parsing is most of a report's time.
    static let batchLines = 512

    /// A line as parsed (and a check rendered), before it is handed over in order.
    private enum ParsedLine: Sendable {
        case blank
        case invalid(JSONSyntaxError)
        case parsed(FieldRecord.Line?, rendered: String?)
    }

    /// Reads `fd` to its end and hands each check to `handle`, in order, with what `render` made
    /// of it: `render` runs on the parsing threads (a CSV row is built there, not on this one).
    /// `name` is how errors name the input (a path, or `stdin`). A line that is not JSON, or JSON
    /// that is not a field run's line, is a data error naming the file and the line, never quoting
    /// it (it may hold personal data); empty lines are skipped.
    package static func read(
        _ fd: Int32, name: String, rendering render: (@Sendable (FieldRecord) -> String)? = nil,
        _ handle: (FieldRecord, _ rendered: String?) throws(CellpathError) -> Void
    ) throws(CellpathError) -> Tally {
        var tally = Tally()
        var pending: [UInt8] = []
        var lineNumber = 0
        var consumed = 0
        var batch: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        func take(_ line: ParsedLine, number: Int, isLast: Bool) throws(CellpathError) {
            switch line {
            case .blank: return
            case .invalid(let error):
                if isLast {
                    tally.partialLastLine = true
                    return
                }
                throw CellpathError(
                    .dataError, "\(name), line \(number): not valid JSON (column \(error.position.column))",
                    hint: "each line must be one JSON object written by a field run (--repeat N --json)")
            case .parsed(.check(let record)?, let rendered):
                tally.checks += 1
                try handle(record, rendered)
            case .parsed(.summary?, _): tally.summaries += 1
            case .parsed(nil, _):
                throw CellpathError(
                    .dataError, "\(name), line \(number): not a field run's record (no product and steps)",
                    hint: "each line must be one JSON object written by a field run (--repeat N --json)")
            }
        }
        func flush() throws(CellpathError) {
            let first = lineNumber - batch.count + 1
            for (offset, line) in parse(batch, render).enumerated() {
                try take(line, number: first + offset, isLast: false)
            }
            batch.removeAll(keepingCapacity: true)
        }
        func queue(_ line: ArraySlice<UInt8>) throws(CellpathError) {
            lineNumber += 1
            batch.append(Array(line))
            if batch.count == batchLines { try flush() }
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
                    try queue(buffer[start ..< index])
                } else {
                    pending += buffer[start ..< index]
                    try queue(pending[...])
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
        try flush()
        if !pending.isEmpty {
            lineNumber += 1
            try take(parse(pending, render), number: lineNumber, isLast: true)
        }
        return tally
    }

    /// Parses `lines` on every online core, in contiguous shares; the results in line order.
    private static func parse(_ lines: [[UInt8]], _ render: (@Sendable (FieldRecord) -> String)?) -> [ParsedLine] {
        var results = [ParsedLine](repeating: .blank, count: lines.count)
        let workers = max(1, min(lines.count, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let share = (lines.count + workers - 1) / max(1, workers)
        results.withUnsafeMutableBufferPointer { buffer in
            // Each worker writes only its own share of the buffer.
            nonisolated(unsafe) let output = buffer
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                for index in worker * share ..< min(lines.count, (worker + 1) * share) {
                    output[index] = parse(lines[index], render)
                }
            }
        }
        return results
    }

    private static func parse(_ line: [UInt8], _ render: (@Sendable (FieldRecord) -> String)?) -> ParsedLine {
        guard line.contains(where: { !isWhitespace($0) }) else { return .blank }
        do {
            let parsed = FieldRecord.line(JSONValue(node: try StrictJSONParser.parse(line)))
            guard case .check(let record)? = parsed, let render else { return .parsed(parsed, rendered: nil) }
            return .parsed(parsed, rendered: render(record))
        } catch {
            return .invalid(error)
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }
}
