import CellpathCore
import Glibc
import Simulator
import SimulatorScenario

/// Brings test worlds up and down with a unique prefix (never the user's `cp-`), with the
/// built `cellpath` binary running the daemon (`cellpath sim up --foreground`).
public enum WorldFixture {
    /// A fresh prefix like `ct4k2x9-` (8 characters, the longest allowed).
    public static func uniquePrefix() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return "ct" + String((0 ..< 5).map { _ in alphabet.randomElement()! }) + "-"
    }

    /// Starts a detached world with `scenario` (written to a temporary file) and returns its status.
    public static func up(prefix: String, scenario: Scenario? = nil) throws -> SimulatorStatus {
        var options = DaemonOptions(prefix: prefix)
        var file: String?
        if let scenario {
            let path = "/tmp/\(prefix)scenario.json"
            let bytes = scenario.encoded()
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            options.scenarioPath = path
            file = path
        }
        defer { if let file { unlink(file) } }
        var hostOptions = options
        hostOptions.scenarioPath = RunDirectory(prefix: prefix).scenarioFile
        return try SimulatedWorld.up(options, daemonCommand: [CellpathBinary.path] + hostOptions.foregroundArguments)
    }

    /// Runs `body` with a world that is up, and always takes it down afterwards.
    public static func withWorld<T>(scenario: Scenario? = nil, _ body: (String) throws -> T) throws -> T {
        let prefix = uniquePrefix()
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }
        _ = try up(prefix: prefix, scenario: scenario)
        return try body(prefix)
    }

    /// Runs a command and returns its stdout; records nothing, throws on spawn failure.
    public static func output(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(arguments, environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
    }
}
