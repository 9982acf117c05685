import Glibc

/// Files of the cellpath source tree, for tests that compare docs with the program.
public enum Repository {
    /// The package root, found from this file's path.
    public static var root: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/TestSupport/Repository.swift
        return parts.joined(separator: "/")
    }

    /// The whole text of a file under the package root, or nil if it cannot be read.
    public static func read(_ relativePath: String) -> String? {
        guard let file = fopen(root + "/" + relativePath, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n == 0 { break }
            bytes += buffer[0 ..< n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
