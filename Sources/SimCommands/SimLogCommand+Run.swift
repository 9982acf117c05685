import CellpathCLI
import CommandLineKit
import Simulator

extension SimLogCommand {
    static func run(_ options: SimCommand.Options, _ context: CommandContext) throws -> CommandOutcome {
        let lines = try SimulatedWorld.requestLog(prefix: try SimCommand.prefix(options.prefix, context))
        for line in lines { Terminal.writeOut(line + "\n") }
        return CommandOutcome()
    }
}
