import CellpathCore
import Glibc
import SystemSupport

/// Files that commands write on request (`--har FILE`).
enum OutputFile {
    /// Writes `bytes` to `path` (created with mode 0600: traces may hold personal data).
    static func write(_ bytes: [UInt8], to path: String) throws(CellpathError) {
        do {
            let fd = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
            try IO.writeAll(fd.rawValue, bytes)
        } catch {
            throw CellpathError(.cannotCreate, "couldn't write \(path): \(error.reason)")
        }
    }

    /// Replaces `path` with `bytes` at once (a temporary file beside it, renamed over it), so that
    /// a reader (node_exporter's textfile collector) never sees half a file. Mode 0644.
    static func replace(_ path: String, with bytes: [UInt8]) throws(CellpathError) {
        let temporary = path + ".tmp.\(getpid())"
        do throws(SystemError) {
            let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
            try IO.writeAll(fd.rawValue, bytes)
            fd.close()
            guard rename(temporary, path) == 0 else { throw SystemError("couldn't rename \(temporary) to \(path)") }
        } catch {
            unlink(temporary)
            throw CellpathError(.cannotCreate, "couldn't write \(path): \(error.reason)")
        }
    }

    /// Refuses, before the work starts, a path that `write` could not write (a directory, a
    /// missing or read-only directory, /proc, a file without write permission), by opening it for
    /// writing as `write` will; leaves an existing file as it is and removes one it created.
    static func checkWritable(_ path: String, option: String) throws(CellpathError) {
        let existed = FileSystem.exists(path)
        do {
            let fd = try FileDescriptor.open(path, O_WRONLY | O_CREAT, mode: 0o600)
            fd.close()
            if !existed { unlink(path) }
        } catch {
            throw CellpathError(.cannotCreate, "couldn't write \(option) \(path): \(error.reason)")
        }
    }
}
