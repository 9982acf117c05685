import CellpathCLI
import CommandLineKit
import Simulator
import SystemSupport

extension SimExecCommand {
    static func run(_ options: Options, _ context: CommandContext) throws -> CommandOutcome {
        do {
            try SimulatedWorld.exec(prefix: try SimCommand.prefix(options.prefix, context), command: options.command)
        } catch let failure as SimulatedWorld.CommandNotRunnable {
            // As a shell says it, with the shell's status (126, 127) rather than one of cellpath's.
            try? IO.writeAll(2, "error: \(failure.message)\n")
            return CommandOutcome(exitStatus: failure.exitStatus)
        }
    }
}
