import CheckCommands
import CommandLineKit
import NumberCommands
import ServeCommands
import SimCommands

extension ProgramImplementations {
    /// What `cellpath-helper` runs: every command that needs more than the front's libraries and
    /// no file capability (the simulator, `number`, the checks, `serve`).
    package static let helper = ProgramImplementations(
        .helper, simulatorCommands + phoneNumberCommands + checkCommands + serveCommands)
}
