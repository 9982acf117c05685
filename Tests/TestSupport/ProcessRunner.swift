import CellpathCore
import Dispatch
import Glibc
import SystemSupport

/// The outcome of running a child process to completion.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs external programs for tests: the built `cellpath` binary, `ip`, `curl`, peers.
public enum ProcessRunner {
    /// Runs `arguments[0]` (searched in PATH) with the rest as arguments, feeding `stdin`,
    /// and waits for it; output is captured whole. `signals` are sent to the child at the given
    /// seconds after its start. The child starts with no blocked signals and default handlers
    /// (test runners block some in their own threads).
    public static func run(
        _ arguments: [String], environment: [String: String]? = nil,
        stdin: String = "", signals: [(after: Double, signal: Int32)] = []
    ) throws -> ProcessResult {
        let input = try FileDescriptor.pipe(), output = try FileDescriptor.pipe(), errors = try FileDescriptor.pipe()
        let pid = try Spawn.start(
            arguments,
            Spawn.Options(
                stdin: input.read.rawValue, stdout: output.write.rawValue,
                stderr: errors.write.rawValue, environment: environment))
        input.read.close(); output.write.close(); errors.write.close()
        for (after, number) in signals {
            let child = pid
            DispatchQueue.global().asyncAfter(deadline: .now() + after) { kill(child, number) }
        }
        // A child that does not read its stdin must not block us: a closed pipe is fine.
        try? IO.writeAll(input.write.rawValue, Array(stdin.utf8))
        input.write.close()
        let (out, err) = readBoth(output.read.release(), errors.read.release())
        return ProcessResult(status: Spawn.wait(pid), stdout: out, stderr: err)
    }

    /// Reads two pipes to their end without deadlocking on either.
    private static func readBoth(_ a: Int32, _ b: Int32) -> (String, String) {
        var fds = [
            pollfd(fd: a, events: Int16(POLLIN), revents: 0),
            pollfd(fd: b, events: Int16(POLLIN), revents: 0)
        ]
        var data: [[UInt8]] = [[], []]
        var open = 2
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open > 0 {
            if poll(&fds, 2, -1) < 0 { if errno == EINTR { continue } else { break } }
            for i in 0 ..< 2 where fds[i].fd >= 0 && fds[i].revents != 0 {
                let n = read(fds[i].fd, &buffer, buffer.count)
                if n > 0 {
                    data[i].append(contentsOf: buffer[0 ..< n])
                } else {
                    close(fds[i].fd); fds[i].fd = -1; open -= 1
                }
            }
        }
        return (String(decoding: data[0], as: UTF8.self), String(decoding: data[1], as: UTF8.self))
    }
}

/// A test's system call or helper command that failed.
public enum ProcessError: Error, CustomStringConvertible {
    case spawn(String, Int32)
    public var description: String {
        switch self {
        case .spawn(let what, let code): return "cannot start \(what): \(SystemError.text(code))"
        }
    }
}

/// Runs blocking work (a child process, a server's `stop()`) on a thread of its own and awaits
/// it, so that async code holds no thread of Swift's cooperative pool while it waits.
public func onOwnThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        do {
            try Threads.detach { continuation.resume(with: Result { try work() }) }
        } catch {
            continuation.resume(throwing: error)
        }
    }
}

extension ProcessRunner {
    /// `run` for async code: the child is waited for on a thread of its own (`onOwnThread`).
    public static func running(
        _ arguments: [String], environment: [String: String]? = nil,
        stdin: String = ""
    ) async throws -> ProcessResult {
        try await onOwnThread { try run(arguments, environment: environment, stdin: stdin) }
    }
}
