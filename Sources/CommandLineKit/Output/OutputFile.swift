import CellpathCore
import Glibc
import SystemSupport

/// Files that commands write on request (`--har FILE`, `--metrics-file FILE`), through
/// `FileSystem.write` (a new file renamed over the old, never through a symbolic link) and with
/// the rights of `caller` (`CommandContext.caller`: the user who started a privileged process).
package enum OutputFile {
    /// Replaces `path` with `bytes` at once, so that a reader (node_exporter's textfile
    /// collector) never sees half a file; `mode` 0600 by default (traces may hold personal data).
    package static func write(
        _ bytes: [UInt8], to path: String, mode: mode_t = 0o600, as caller: FileIdentity?
    ) throws(CellpathError) {
        do {
            try FileSystem.write(bytes, to: path, mode: mode, as: caller)
        } catch {
            throw CellpathError(.cannotCreate, "couldn't write \(path): \(error.reason)")
        }
    }

    /// Refuses, before the work starts, a path that `write` could not write (a directory, a
    /// symbolic link, a missing or read-only directory, /proc), without creating or following
    /// `path` itself (`FileSystem.checkWritable`).
    package static func checkWritable(_ path: String, option: String, as caller: FileIdentity?) throws(CellpathError) {
        do {
            try FileSystem.checkWritable(path, as: caller)
        } catch {
            throw CellpathError(.cannotCreate, "couldn't write \(option) \(path): \(error.reason)")
        }
    }
}
