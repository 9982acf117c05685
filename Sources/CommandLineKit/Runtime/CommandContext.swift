import CellpathCore
import SystemSupport

/// What a running command may use: global options, the environment, the logger and the
/// progress reporter. Created once per invocation.
package struct CommandContext: Sendable {
    package var global: GlobalOptions
    /// The command's path (`["cellpath", "bearer", "up"]`), for the usage errors it finds.
    package var command: [String]
    package var environment: [String: String]
    package var logger: Logger
    package var progress: Progress
    /// Whose rights the files named by options (`--har`, `--password-file`, …) are opened
    /// with: the caller's when this process is privileged (`ProcessPrivilege.caller`), else
    /// nil, this process's own.
    package var caller: FileIdentity? = nil
}
