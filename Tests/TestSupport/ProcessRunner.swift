import CellpathCore
import Dispatch
import Glibc

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
    public static func run(_ arguments: [String], environment: [String: String]? = nil,
                           stdin: String = "", signals: [(after: Double, signal: Int32)] = []) throws -> ProcessResult {
        var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0], inPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0, pipe(&inPipe) == 0 else {
            throw ProcessError.spawn(arguments[0], errno)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        for fd in inPipe + outPipe + errPipe { posix_spawn_file_actions_addclose(&actions, fd) }

        let pid: pid_t
        do {
            pid = try Spawn.start(arguments, actions: &actions, environment: environment)
        } catch {
            for fd in inPipe + outPipe + errPipe { close(fd) }
            throw error
        }
        close(inPipe[0]); close(outPipe[1]); close(errPipe[1])
        for (after, number) in signals {
            let child = pid
            DispatchQueue.global().asyncAfter(deadline: .now() + after) { kill(child, number) }
        }
        let input = Array(stdin.utf8)
        input.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(inPipe[1], buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
        close(inPipe[1])
        let (out, err) = readBoth(outPipe[0], errPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ProcessResult(status: exit, stdout: out, stderr: err)
    }

    /// Reads two pipes to their end without deadlocking on either.
    private static func readBoth(_ a: Int32, _ b: Int32) -> (String, String) {
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        var data: [[UInt8]] = [[], []]
        var open = 2
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open > 0 {
            if poll(&fds, 2, -1) < 0 { if errno == EINTR { continue } else { break } }
            for i in 0..<2 where fds[i].fd >= 0 && fds[i].revents != 0 {
                let n = read(fds[i].fd, &buffer, buffer.count)
                if n > 0 { data[i].append(contentsOf: buffer[0..<n]) } else {
                    close(fds[i].fd); fds[i].fd = -1; open -= 1
                }
            }
        }
        return (String(decoding: data[0], as: UTF8.self), String(decoding: data[1], as: UTF8.self))
    }
}

public enum ProcessError: Error, CustomStringConvertible {
    case spawn(String, Int32)
    public var description: String {
        switch self { case .spawn(let p, let e): return "cannot start \(p): \(String(cString: strerror(e)))" }
    }
}
