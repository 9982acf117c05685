import Simulator

/// curl, as the tests run it: inside a network namespace they made, or on a simulated world's
/// device (`<prefix>ue`), never on the host's network.
public enum Curl {
    /// `curl -sS ARGUMENTS…` inside `namespace` (`ip netns exec`).
    public static func run(
        in namespace: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: String = ""
    ) throws -> ProcessResult {
        try ProcessRunner.run(
            ["ip", "netns", "exec", namespace, "curl", "-sS"] + arguments,
            environment: environment, stdin: stdin)
    }

    /// curl on the device of the world `prefix`, with the world's environment, trusting its CA, and
    /// giving up after `maxTime` seconds.
    public static func onDevice(of prefix: String, _ arguments: [String], maxTime: Int = 10) throws -> ProcessResult {
        var environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        for (name, value) in try SimulatedWorld.environment(prefix: prefix) { environment[name] = value }
        return try run(
            in: prefix + "ue",
            ["--max-time", "\(maxTime)", "--cacert", RunDirectory(prefix: prefix).caCertificate]
                + arguments, environment: environment)
    }
}
