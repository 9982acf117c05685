import CellpathCore
import Glibc

/// The files of one running world under `/run/cellpath-sim/<prefix>/`: pid files, the daemon
/// log, the control socket, the request log, the effective scenario and the test CA.
public struct RunDirectory: Sendable, Equatable {
    /// The directory itself.
    public var path: String

    /// The parent of every world's run directory.
    public static let root = "/run/cellpath-sim"

    public init(prefix: String) { path = "\(Self.root)/\(prefix)" }

    /// The daemon's pid file.
    public var daemonPIDFile: String { "\(path)/daemon.pid" }
    /// The daemon's log (stdout and stderr of a detached daemon and its dnsmasq children).
    public var logFile: String { "\(path)/daemon.log" }
    /// The control socket (`sim status`, `sim bearer …`).
    public var controlSocket: String { "\(path)/control.sock" }
    /// One JSON line per request served by the fake API and the carrier endpoint (`sim log`).
    public var requestLog: String { "\(path)/requests.log" }
    /// The fake API's project credentials (`SimulatorCredentials`).
    public var credentialsFile: String { "\(path)/credentials.json" }
    /// The effective scenario (validated, defaults filled in).
    public var scenarioFile: String { "\(path)/scenario.json" }
    /// The test CA certificate that clients trust (`CELLPATH_CA_FILE`).
    public var caCertificate: String { "\(path)/tls/ca.pem" }
    /// The CA's private key (only used to sign the server certificate).
    public var caKey: String { "\(path)/tls/ca.key" }
    /// The fake API's certificate (chain: server certificate, then CA) and key.
    public var serverCertificate: String { "\(path)/tls/server.pem" }
    public var serverKey: String { "\(path)/tls/server.key" }
    /// The pid file of the dnsmasq child named `name` (`carrier`, `wifi`).
    public func dnsPIDFile(_ name: String) -> String { "\(path)/dnsmasq-\(name).pid" }
}

/// Small file helpers for the run directory. Any thread.
enum Files {
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Creates `path` and its parents with `mode`.
    static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws {
        var current = ""
        for part in path.split(separator: "/") {
            current += "/\(part)"
            if mkdir(current, mode) != 0 && errno != EEXIST {
                throw CellpathError(errno == EACCES || errno == EPERM ? .permission : .unavailable,
                                    "cannot create \(current): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Writes `bytes` to `path` atomically (temporary file + rename) with `mode`.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
        let temporary = "\(path).tmp\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw CellpathError(.unavailable, "cannot write \(path): \(String(cString: strerror(errno)))") }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { close(fd); unlink(temporary); throw CellpathError(.unavailable, "cannot write \(path)") }
            offset += n
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CellpathError(.unavailable, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    static func write(_ text: String, to path: String, mode: mode_t = 0o644) throws {
        try write(Array(text.utf8), to: path, mode: mode)
    }

    /// The whole file, or nil when it cannot be read.
    static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<n])
        }
    }

    static func readText(_ path: String) -> String? { read(path).map { String(decoding: $0, as: UTF8.self) } }

    /// Reads a pid file: the pid on its first line, or nil.
    static func readPID(_ path: String) -> pid_t? {
        guard let text = readText(path), let pid = pid_t(text.trimmingTrailingNewlines()), pid > 1 else { return nil }
        return pid
    }

    /// Removes `path` and everything below it; no error when it does not exist.
    static func removeTree(_ path: String) {
        guard let dir = opendir(path) else { unlink(path); return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let child = "\(path)/\(name)"
            var info = stat()
            if lstat(child, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR { removeTree(child) } else { unlink(child) }
        }
        closedir(dir)
        rmdir(path)
    }
}
