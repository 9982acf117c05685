import CellpathCore

/// What a running command may use: global options, the environment, the logger and the
/// progress reporter. Created once per invocation.
struct CommandContext: Sendable {
    var global: GlobalOptions
    var environment: [String: String]
    var logger: Logger
    var progress: Progress
}
