import CellpathCore
import Glibc
import SystemSupport

/// Runs the external programs the simulated world is built with (`ip`, `openssl`, `dnsmasq`)
/// and turns their failures into cellpath errors. Blocking; call from a plain thread.
enum Subprocess {
    /// Runs `arguments` to completion with stdin from /dev/null, capturing stdout and stderr together.
    static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Spawn.Result {
        do {
            return try Spawn.run(arguments, environment: environment)
        } catch {
            throw startError(error)
        }
    }

    /// Runs `arguments` and throws `.unavailable` with its output when it does not exit 0.
    @discardableResult
    static func check(_ arguments: [String]) throws -> String {
        let result = try run(arguments)
        guard result.status == 0 else {
            let detail = result.text.trimmingTrailingNewlines()
            throw CellpathError(
                .unavailable,
                "`\(arguments.joined(separator: " "))` failed (status \(result.status))\(detail.isEmpty ? "" : ": \(detail)")"
            )
        }
        return result.text
    }

    /// Starts `arguments` without waiting (see `Spawn.Options`); returns its pid.
    static func start(_ arguments: [String], _ options: Spawn.Options = Spawn.Options()) throws -> pid_t {
        do {
            return try Spawn.start(arguments, options)
        } catch {
            throw startError(error)
        }
    }

    private static func startError(_ error: SystemError) -> CellpathError {
        CellpathError(error, hint: error.code == ENOENT ? "install it (sudo make deps)" : nil)
    }
}

extension String {
    /// The string without trailing newlines and spaces.
    func trimmingTrailingNewlines() -> String {
        var s = Substring(self)
        while let last = s.last, last.isNewline || last == " " { s = s.dropLast() }
        return String(s)
    }
}
