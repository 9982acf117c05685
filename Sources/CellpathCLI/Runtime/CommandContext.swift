import CellpathCore

/// What a running command may use: global options, the environment, the logger and the
/// progress reporter. Created once per invocation.
package struct CommandContext: Sendable {
    package var global: GlobalOptions
    package var environment: [String: String]
    package var logger: Logger
    package var progress: Progress
}
