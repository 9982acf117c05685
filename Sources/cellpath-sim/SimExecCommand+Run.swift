import CellpathCLI
import Simulator

extension SimExecCommand {
    static func run(_ parsed: ParsedCommand, _ context: CommandContext) throws -> CommandOutcome {
        let status = try SimulatedWorld.exec(prefix: try SimCommand.prefix(parsed, context),
                                             command: parsed[Self.command])
        return CommandOutcome(exitStatus: status)
    }
}
