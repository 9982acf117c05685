import CellpathCore
import Glibc

/// Files that commands write on request (`--har FILE`).
enum OutputFile {
    /// Writes `bytes` to `path` (created with mode 0600: traces may hold personal data).
    static func write(_ bytes: [UInt8], to path: String) throws(CellpathError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CellpathError(errno == EACCES ? .permission : .dataError, "couldn't write \(path): \(reason)")
        }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CellpathError(.dataError, "couldn't write \(path): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }
}
