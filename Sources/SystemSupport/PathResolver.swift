import Glibc

/// `realpath(3)` for many paths that share their leading directories, such as a walk through
/// sysfs: every prefix it resolves is kept, so each directory and symbolic link is read once
/// (`realpath` reads every component of every path again). For one pass over a tree that does
/// not change meanwhile; not shared between threads.
package final class PathResolver {
    private var resolved: [String: String?] = ["/": "/"]

    package init() {}

    /// The absolute path with no symbolic link, `.` or `..` that `path` names; nil when a
    /// component is missing or not a directory, or the links loop. A relative `path` is
    /// resolved from the working directory, by `realpath(3)`.
    package func realPath(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return FileSystem.realPath(path) }
        return resolve(path, linksLeft: 40)
    }

    private func resolve(_ path: String, linksLeft: Int) -> String? {
        if let known = resolved[path] { return known }
        let result = resolveUncached(path, linksLeft: linksLeft)
        resolved.updateValue(result, forKey: path)
        return result
    }

    private func resolveUncached(_ path: String, linksLeft: Int) -> String? {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return nil }
        let parentPath = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        let name = trimmed[trimmed.index(after: slash)...]
        guard let parent = resolve(parentPath, linksLeft: linksLeft) else { return nil }
        switch name {
        case "", ".":
            return parent
        case "..":
            guard let up = parent.lastIndex(of: "/"), up != parent.startIndex else { return "/" }
            return String(parent[..<up])
        default:
            let candidate = parent == "/" ? "/\(name)" : "\(parent)/\(name)"
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(candidate, &buffer, buffer.count - 1)
            if count >= 0 {
                guard linksLeft > 0 else { return nil }
                let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return resolve(target.hasPrefix("/") ? target : "\(parent)/\(target)", linksLeft: linksLeft - 1)
            }
            // EINVAL: it exists and is no symbolic link; anything else (ENOENT, ENOTDIR…): it does not resolve.
            return errno == EINVAL ? candidate : nil
        }
    }
}
