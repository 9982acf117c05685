import Glibc

/// The descriptors that processes hold open on one file, read from `/proc/*/fd`: who holds a
/// device node open. Any thread; reads only.
public enum OpenDescriptors {
    /// One process's descriptor of the file.
    public struct Descriptor: Sendable, Equatable {
        public var pid: Int32
        public var fd: Int32
    }

    /// Every descriptor of `path` that /proc shows (this process's too), and how many processes'
    /// descriptors could not be read (other users' without root).
    public static func of(_ path: String) -> (descriptors: [Descriptor], unreadable: Int) {
        var target = stat()
        guard stat(path, &target) == 0 else { return ([], 0) }
        var found: [Descriptor] = [], unreadable = 0
        for pid in numericEntries("/proc") ?? [] {
            guard let descriptors = numericEntries("/proc/\(pid)/fd") else {
                if access("/proc/\(pid)", F_OK) == 0 { unreadable += 1 }  // else it has just ended
                continue
            }
            for fd in descriptors {
                var info = stat()
                if stat("/proc/\(pid)/fd/\(fd)", &info) == 0 && info.st_dev == target.st_dev
                    && info.st_ino == target.st_ino
                {
                    found.append(Descriptor(pid: pid, fd: fd))
                }
            }
        }
        return (found, unreadable)
    }

    /// The numeric entries of directory `path` (pids, descriptors); nil when it cannot be listed.
    public static func numericEntries(_ path: String) -> [Int32]? {
        FileSystem.entries(path)?.compactMap { Int32($0) }
    }
}
