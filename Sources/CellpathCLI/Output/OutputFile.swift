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

    /// Refuses, before the work starts, a path that `write` could not write: a directory, a
    /// missing or read-only directory, a file without write permission. Creates nothing.
    static func checkWritable(_ path: String, option: String) throws(CellpathError) {
        var info = stat()
        if stat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR {
                throw CellpathError(.cannotCreate, "couldn't write \(option) \(path): it is a directory")
            }
            guard access(path, W_OK) == 0 else {
                throw CellpathError(.cannotCreate, "couldn't write \(option) \(path): \(SystemError.text(errno))")
            }
            return
        }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        guard access(directory.isEmpty ? "/" : directory, W_OK | X_OK) == 0 else {
            throw CellpathError(.cannotCreate, "couldn't write \(option) \(path): \(directory.isEmpty ? "/" : directory): \(SystemError.text(errno))")
        }
    }
}
