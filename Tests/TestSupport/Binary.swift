import Glibc

/// Locates the built `cellpath` executable for end-to-end tests: `CELLPATH_BIN`, or the
/// build directory that holds the running test bundle.
public enum CellpathBinary {
    public static var path: String {
        if let env = getenv("CELLPATH_BIN") { return String(cString: env) }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let exe = n > 0 ? String(decoding: buffer[0 ..< n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        // …/.build/<triple>/debug/cellpathPackageTests.xctest → …/debug/cellpath
        var components = exe.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast()
        return components.joined(separator: "/") + "/cellpath"
    }

    /// Runs `cellpath` with `arguments` and a controlled environment (no user config).
    public static func run(
        _ arguments: [String], environment: [String: String] = [:],
        stdin: String = ""
    ) throws -> ProcessResult {
        var env = [
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
            "XDG_CONFIG_HOME": "/nonexistent", "LANG": "C.UTF-8",
            "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
        ]
        for (k, v) in environment { env[k] = v }
        return try ProcessRunner.run([path] + arguments, environment: env, stdin: stdin)
    }
}
