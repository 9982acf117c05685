import Glibc

/// Whole-buffer reads and writes on raw descriptors, retrying on EINTR and short counts.
/// Blocking; call from a plain thread, not from Swift's cooperative pool in a hot path.
public enum IO {
    /// Writes all of `bytes` to `fd`.
    public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) throws(SystemError) {
        let result: Int32 = Array(bytes).withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return 0
        }
        if result != 0 { throw SystemError("write", code: result) }
    }

    /// Writes all of `text` (UTF-8) to `fd`.
    public static func writeAll(_ fd: Int32, _ text: String) throws(SystemError) {
        try writeAll(fd, Array(text.utf8))
    }

    /// Reads `fd` until end of file (at most `limit` bytes; more is an EFBIG error).
    public static func readAll(_ fd: Int32, limit: Int = 64 << 20) throws(SystemError) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("read")
            }
            if n == 0 { return bytes }
            guard bytes.count + n <= limit else { throw SystemError("read", code: EFBIG) }
            bytes.append(contentsOf: buffer[0..<n])
        }
    }

    /// Sends all of `bytes` on the socket `fd` without raising SIGPIPE when the peer is gone.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("send")
            }
            offset += n
        }
    }
}

/// Whole files and directory trees. Any thread; blocking.
public enum FileSystem {
    /// True when something exists at `path`.
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The path of the running executable (/proc/self/exe resolved), or nil when unreadable.
    public static var runningExecutable: String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = buffer.withUnsafeMutableBytes {
            readlink("/proc/self/exe", $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count - 1)
        }
        return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
    }

    /// The whole content of the file at `path` (at most `limit` bytes).
    public static func read(_ path: String, limit: Int = 64 << 20) throws(SystemError) -> [UInt8] {
        let fd = try FileDescriptor.open(path, O_RDONLY)
        do {
            return try IO.readAll(fd.rawValue, limit: limit)
        } catch {
            throw SystemError("read \(path)", code: error.code)
        }
    }

    /// The file at `path` as UTF-8 text (invalid bytes replaced), or nil when it cannot be read.
    public static func readText(_ path: String) -> String? {
        (try? read(path)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Replaces the file at `path` with `bytes` atomically (temporary file + rename), with `mode`.
    public static func write(_ bytes: some Collection<UInt8>, to path: String, mode: mode_t = 0o644) throws(SystemError) {
        let temporary = "\(path).tmp\(getpid())"
        do throws(SystemError) {
            let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC, mode: mode)
            try IO.writeAll(fd.rawValue, bytes)
            fd.close()
            guard rename(temporary, path) == 0 else { throw SystemError("rename") }
        } catch {
            unlink(temporary)
            throw SystemError("write \(path)", code: error.code)
        }
    }

    /// Replaces the file at `path` with `text` (UTF-8) atomically.
    public static func write(_ text: String, to path: String, mode: mode_t = 0o644) throws(SystemError) {
        try write(Array(text.utf8), to: path, mode: mode)
    }

    /// Writes `text` into the existing file at `path` in one write, without a temporary file and
    /// never through a symbolic link: for kernel settings under /proc/sys and /sys.
    public static func overwrite(_ text: String, at path: String) throws(SystemError) {
        let fd = try FileDescriptor.open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW)
        do {
            try IO.writeAll(fd.rawValue, text)
        } catch {
            throw SystemError("write \(path)", code: error.code)
        }
    }

    /// Creates `path` and its missing parents with `mode`.
    public static func makeDirectories(_ path: String, mode: mode_t = 0o755) throws(SystemError) {
        var current = ""
        for part in path.split(separator: "/") {
            current += "/\(part)"
            if mkdir(current, mode) != 0 && errno != EEXIST { throw SystemError("create \(current)") }
        }
    }

    /// Removes `path` and everything below it, not following symbolic links; no error when absent.
    public static func removeTree(_ path: String) {
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
