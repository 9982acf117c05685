import Glibc

/// How a cellpath executable ends once its command is done.
public enum ProcessEnd {
    /// Flushes standard output and error, then ends the process with `status` without running
    /// exit handlers: a library's handler (OpenSSL's cleanup) would otherwise free what a worker
    /// thread still uses, such as a cancelled request's TLS handshake, and crash the process
    /// after its answer was given.
    public static func exit(_ status: Int32) -> Never {
        fflush(nil)
        _exit(status)
    }
}
