/// strace following a command and all its threads, reporting its closes that failed: a close
/// that fails with EBADF closed a descriptor already closed, and the same close a moment earlier
/// would have taken a descriptor another thread had just been given.
public enum FailedCloses {
    /// The words to put before a command line to trace it.
    public static let tracer = ["strace", "-f", "-qq", "-e", "trace=close", "-e", "status=failed"]

    /// The traced closes in `stderr` that failed with EBADF.
    public static func ofClosedDescriptors(in stderr: String) -> [Substring] {
        stderr.split(separator: "\n").filter { $0.contains("close(") && $0.contains("EBADF") }
    }
}
