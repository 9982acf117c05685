import CellpathCore
import Glibc

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
        return n > 0 ? String(decoding: buffer[0 ..< n], as: UTF8.self) : nil
    }

    /// The whole content of the file at `path` (at most `limit` bytes), opened with
    /// `identity`'s rights (default: this process's).
    public static func read(
        _ path: String, limit: Int = 64 << 20, as identity: FileIdentity? = nil
    ) throws(SystemError) -> [UInt8] {
        let fd = try (identity ?? .effective).perform { () throws(SystemError) in
            try FileDescriptor.open(path, O_RDONLY)
        }
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

    /// How long a written file must outlast its writer.
    public enum Durability: Sendable {
        /// Synced before and after the rename: the file survives a crash of the machine.
        case synced
        /// Renamed without syncing: the file survives a crash of its writer (the kernel holds
        /// it), not necessarily one of the machine. For runtime state (under /run) that
        /// describes what a reboot undoes anyway, such as the bearer records: a sync there
        /// costs a disk write wherever /run is not a tmpfs.
        case untilReboot
    }

    /// Replaces the file at `path` with `bytes`: the one way cellpath writes a file. The bytes go
    /// to a new file of a random name in the same directory (created exclusively, never through
    /// a symbolic link, with exactly `mode`), which is renamed over `path` (synced before and
    /// after, unless `durability` is `.untilReboot`): a reader sees the old file or the new
    /// one, never half of one. Refused:
    /// a `path` that is a symbolic link (never followed) or not a regular file; when writing as
    /// root, a directory that another user could change (`FileSystem.onlyRootCanChange` for
    /// the directories above it; the directory itself owned by root and writable by no one
    /// else, unless it is sticky and the file is absent or root's). `identity` (default: this
    /// process's) is who creates the file, e.g. the caller of a privileged process.
    public static func write(
        _ bytes: some Collection<UInt8>, to path: String, mode: mode_t = 0o644,
        as identity: FileIdentity? = nil, durability: Durability = .synced
    ) throws(SystemError) {
        let writer = identity ?? .effective
        try writer.perform { () throws(SystemError) in
            let directory = try openDirectory(of: path, writer: writer)
            let (file, temporary) = try createTemporary(in: directory, for: path, mode: mode)
            do throws(SystemError) {
                guard fchmod(file.rawValue, mode) == 0 else { throw SystemError("chmod") }
                try IO.writeAll(file.rawValue, bytes)
                guard durability == .untilReboot || fsync(file.rawValue) == 0 else { throw SystemError("fsync") }
                file.close()
                guard
                    renameat(directory.descriptor.rawValue, temporary, directory.descriptor.rawValue, directory.name)
                        == 0
                else {
                    throw SystemError("rename")
                }
            } catch {
                unlinkat(directory.descriptor.rawValue, temporary, 0)
                throw SystemError("write \(path)", code: error.code)
            }
            if durability == .synced { _ = fsync(directory.descriptor.rawValue) }
        }
    }

    /// Replaces the file at `path` with `text` (UTF-8), as `write(_:to:mode:as:)` does.
    public static func write(
        _ text: String, to path: String, mode: mode_t = 0o644, as identity: FileIdentity? = nil
    ) throws(SystemError) {
        try write(Array(text.utf8), to: path, mode: mode, as: identity)
    }

    /// Opens the file at `path` to read it and to append to it (`O_APPEND`: every write lands at
    /// its end), creating it with `mode` when absent; the path is checked as `write` checks it
    /// (never through a symbolic link; as root, not in a directory others may change) and
    /// `identity` (default: this process's) opens it: for records added a line at a time.
    public static func openForAppending(
        _ path: String, mode: mode_t = 0o644, as identity: FileIdentity? = nil
    ) throws(SystemError) -> FileDescriptor {
        let writer = identity ?? .effective
        return try writer.perform { () throws(SystemError) in
            let directory = try openDirectory(of: path, writer: writer)
            let fd = openat(
                directory.descriptor.rawValue, directory.name, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                mode)
            guard fd >= 0 else { throw SystemError("open \(path)") }
            return FileDescriptor(owning: fd)
        }
    }

    /// Throws the error that `write(_:to:mode:as:)` would throw for `path` before it writes
    /// anything (missing or read-only directory, a directory or a symbolic link at `path`, a
    /// directory another user could change): a temporary file is created and removed beside
    /// it; `path` itself is neither created nor followed.
    public static func checkWritable(_ path: String, as identity: FileIdentity? = nil) throws(SystemError) {
        let writer = identity ?? .effective
        try writer.perform { () throws(SystemError) in
            let directory = try openDirectory(of: path, writer: writer)
            let (_, temporary) = try createTemporary(in: directory, for: path, mode: 0o600)
            unlinkat(directory.descriptor.rawValue, temporary, 0)
        }
    }

    /// The open directory of `path` and the name in it, checked as `write` documents.
    private static func openDirectory(
        of path: String, writer: FileIdentity
    ) throws(SystemError) -> (descriptor: FileDescriptor, name: String) {
        let slash = path.lastIndex(of: "/")
        let name = String(slash.map { path[path.index(after: $0)...] } ?? path[...])
        let directoryPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard !name.isEmpty, name != ".", name != ".." else { throw SystemError("write \(path)", code: EISDIR) }
        let asRoot = writer.uid == 0
        if asRoot && !onlyRootCanChange(directoryPath, allowingSharedEnd: true) {
            throw SystemError(
                "write \(path)", code: EPERM,
                explanation: "its directory, or one above it, may be changed by a user other than root")
        }
        let directory: FileDescriptor
        do {
            directory = try FileDescriptor.open(directoryPath, O_RDONLY | O_DIRECTORY)
        } catch {
            throw SystemError("write \(path)", code: error.code)
        }
        var directoryInfo = stat(), info = stat()
        guard fstat(directory.rawValue, &directoryInfo) == 0 else { throw SystemError("write \(path)") }
        let exists = fstatat(directory.rawValue, name, &info, AT_SYMLINK_NOFOLLOW) == 0
        if exists && info.st_mode & S_IFMT == S_IFLNK {
            throw SystemError(
                "write \(path)", code: ELOOP, explanation: "it is a symbolic link, which cellpath never writes through")
        }
        if exists && info.st_mode & S_IFMT == S_IFDIR { throw SystemError("write \(path)", code: EISDIR) }
        if exists && info.st_mode & S_IFMT != S_IFREG {
            throw SystemError("write \(path)", code: EINVAL, explanation: "it is not a regular file")
        }
        if asRoot && (directoryInfo.st_uid != 0 || directoryInfo.st_mode & 0o022 != 0) {
            let sticky = directoryInfo.st_mode & S_ISVTX != 0
            guard directoryInfo.st_uid == 0 && sticky && (!exists || info.st_uid == 0) else {
                throw SystemError(
                    "write \(path)", code: EPERM,
                    explanation: "its directory may be written by a user other than root, and the file is not root's")
            }
        }
        return (directory, name)
    }

    /// A new file of a random name in `directory`: `O_EXCL` and `O_NOFOLLOW`, so that nothing
    /// placed there beforehand (a file, a symbolic link) is opened instead.
    private static func createTemporary(
        in directory: (descriptor: FileDescriptor, name: String), for path: String,
        mode: mode_t
    ) throws(SystemError) -> (FileDescriptor, String) {
        var attempts = 0
        while true {
            let temporary = ".cellpath-\(RandomBytes.hex(8)).tmp"
            let fd = openat(
                directory.descriptor.rawValue, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd >= 0 { return (FileDescriptor(owning: fd), temporary) }
            attempts += 1
            guard errno == EEXIST && attempts < 16 else { throw SystemError("write \(path)") }
        }
    }

    /// Whether no user but root can change what `path` leads to: every part of it that exists
    /// (symbolic links resolved) is owned by root; a directory on the way that others may write
    /// is sticky (so they cannot replace root's entries); the last existing part is writable by
    /// no one else (a socket excepted), unless `allowingSharedEnd` (a directory that `write`
    /// checks itself). A path that does not exist yet is judged by the part that does.
    public static func onlyRootCanChange(_ path: String, allowingSharedEnd: Bool = false) -> Bool {
        var pending = absolute(path).split(separator: "/").map(String.init)
        var current = ""
        var links = 0
        var root = stat(), info = stat()
        guard lstat("/", &root) == 0, root.st_uid == 0 else { return false }
        var last = root
        while !pending.isEmpty {
            let next = current + "/" + pending.removeFirst()
            guard lstat(next, &info) == 0 else {
                if errno != ENOENT { return false }
                pending = []
                break
            }
            guard info.st_uid == 0, last.st_mode & 0o022 == 0 || last.st_mode & S_ISVTX != 0 else { return false }
            if info.st_mode & S_IFMT == S_IFLNK {
                links += 1
                guard links <= 40, let resolved = realPath(next) else { return false }
                pending = resolved.split(separator: "/").map(String.init) + pending
                current = ""
                last = root
                continue
            }
            current = next
            last = info
        }
        let kind = last.st_mode & S_IFMT
        return kind == S_IFSOCK || allowingSharedEnd || last.st_mode & 0o022 == 0
    }

    /// `path` made absolute against the working directory.
    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" + path }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/" + path
    }

    /// `realpath(3)` of `path`, or nil.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
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

    /// Creates `path` and its missing parents with `mode`. A parent that another process removes
    /// meanwhile (the last world's `sim down` removes the shared run directory) is created again,
    /// for up to 2 s: a count of attempts runs out when the remover is scheduled between two mkdirs.
    public static func makeDirectories(_ path: String, mode: mode_t = 0o755) throws(SystemError) {
        let deadline = MonotonicClock.now + 2
        while true {
            var current = ""
            var vanished = false
            for part in path.split(separator: "/") {
                current += "/\(part)"
                guard mkdir(current, mode) != 0, errno != EEXIST else { continue }
                guard errno == ENOENT, MonotonicClock.now < deadline else { throw SystemError("create \(current)") }
                vanished = true
                break
            }
            if !vanished { return }
        }
    }

    /// The names in directory `path`, without `.` and `..`, in the directory's order; nil when it
    /// cannot be opened. The one place that reads directory entries.
    public static func entries(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes `path` and everything below it, not following symbolic links; no error when absent.
    public static func removeTree(_ path: String) {
        guard let names = entries(path) else { unlink(path); return }
        for name in names {
            let child = "\(path)/\(name)"
            var info = stat()
            if lstat(child, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
                removeTree(child)
            } else {
                unlink(child)
            }
        }
        rmdir(path)
    }
}
