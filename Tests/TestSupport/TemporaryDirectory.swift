import Glibc
import SystemSupport

/// Private temporary directories for tests: `/tmp/<prefix>-XXXXXX`, mode 0700, removed with
/// everything in them (`FileSystem.removeTree`, which follows no symbolic link).
public enum TemporaryDirectory {
    /// Creates a fresh directory and returns its path; the caller removes it.
    public static func make(_ prefix: String = "cellpath-test") throws -> String {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemError("mkdtemp /tmp/\(prefix)-XXXXXX")
        }
        return String(cString: made)
    }

    /// Runs `body` with a fresh directory, removed afterwards whatever `body` does.
    public static func with<T>(_ prefix: String = "cellpath-test", _ body: (String) throws -> T) throws -> T {
        let path = try make(prefix)
        defer { FileSystem.removeTree(path) }
        return try body(path)
    }
}
