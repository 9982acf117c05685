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
            throw CellpathError(error.code == EACCES || error.code == EPERM ? .permission : .dataError,
                                "couldn't write \(path): \(error.reason)")
        }
    }
}
