import CellpathCLI
import CellpathCore
import FieldReport
import Glibc
import SystemSupport

/// `--records-file`: the JSON Lines file that field mode appends each run's record to, a whole
/// line in one write, synced before the next run starts, so that a run stopped by Ctrl-C, a
/// modem reset or a power loss loses no completed record. With `--resume` it is read first.
final class FieldRecordsFile: Sendable {
    /// Where an earlier run stopped: its id and, per lane (the record's `modem` and `slot`, nil
    /// when the runs named none), the highest run number recorded.
    struct Resumption {
        var runID: String
        var lastRun: [FieldRun.LaneKey: Int]
        /// The records of that run already in the file.
        var records: Int
    }

    let path: String
    private let descriptor: FileDescriptor

    private init(path: String, descriptor: FileDescriptor) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Opens (creates) `path` for appending as `caller` (created 0644, 0600 with `--verbose-full`:
    /// the records then hold whole phone numbers and addresses). With
    /// `resume`, reads it first: the last record's run is the one resumed; a last line cut short
    /// is cut off the file (with a warning), and a last record without its newline gets one, so
    /// that the next record starts a line of its own.
    static func open(
        _ path: String, resume: Bool, disclosure: Disclosure, as caller: FileIdentity?, logger: Logger
    ) throws(CellpathError) -> (file: FieldRecordsFile, resumed: Resumption?) {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileSystem.openForAppending(
                path, mode: disclosure == .full ? 0o600 : 0o644, as: caller)
        } catch {
            throw CellpathError(.cannotCreate, "couldn't open --records-file \(path): \(error.reason)")
        }
        let file = FieldRecordsFile(path: path, descriptor: descriptor)
        guard resume else { return (file, nil) }
        return (file, try file.readResumption(logger))
    }

    private func readResumption(_ logger: Logger) throws(CellpathError) -> Resumption? {
        var records: [(runID: String, lane: FieldRun.LaneKey, run: Int)] = []
        let tally = try FieldRunReader.read(descriptor.rawValue, name: path) { record, _ throws(CellpathError) in
            if let runID = record.runID, let run = record.run {
                records.append((runID, FieldRun.LaneKey(modem: record.modem, slot: record.slot), run))
            }
        }
        let length = Int(lseek(descriptor.rawValue, 0, SEEK_END))
        if tally.partialLastLine {
            logger.warning(
                "\(path): cut off its last line, \(length - tally.wholeLinesLength) bytes cut short (a run stopped mid-write)"
            )
            guard ftruncate(descriptor.rawValue, off_t(tally.wholeLinesLength)) == 0 else {
                throw CellpathError(SystemError("couldn't cut \(path)'s partial last line"), kind: .cannotCreate)
            }
        } else if length > tally.wholeLinesLength {
            try append([UInt8(ascii: "\n")])
        }
        guard let runID = records.last?.runID else { return nil }
        var lastRun: [FieldRun.LaneKey: Int] = [:]
        var count = 0
        for record in records where record.runID == runID {
            lastRun[record.lane] = max(lastRun[record.lane] ?? 0, record.run)
            count += 1
        }
        return Resumption(runID: runID, lastRun: lastRun, records: count)
    }

    /// Appends `bytes` (a whole line) in one write and syncs the file's data.
    func append(_ bytes: [UInt8]) throws(CellpathError) {
        do throws(SystemError) {
            try IO.writeAll(descriptor.rawValue, bytes)
            guard fdatasync(descriptor.rawValue) == 0 else { throw SystemError("fdatasync") }
        } catch {
            throw CellpathError(.cannotCreate, "couldn't write --records-file \(path): \(error.reason)")
        }
    }
}
