@testable import CellpathCLI
@testable import CommandLineKit

extension CommandContext {
    /// `cellpath subscriber-check -q` with no environment, logger or progress: the field-run
    /// tests' context.
    static let quietSubscriberCheck: CommandContext = {
        var global = GlobalOptions()
        global.quiet = true
        return CommandContext(
            global: global, command: ["cellpath", "subscriber-check"], environment: [:], logger: .silent,
            progress: Progress(enabled: false))
    }()
}
