import CellpathCLI
import CommandLineKit
import Simulator

extension SimEnvCommand {
    static func run(_ options: SimCommand.Options, _ context: CommandContext) throws -> CommandOutcome {
        let variables = try SimulatedWorld.environment(prefix: try SimCommand.prefix(options.prefix, context))
        var values = Record()
        for variable in variables { values.add(variable.name, .string(variable.value), label: variable.name) }
        let lines = variables.map { "export \($0.name)=\(shellQuoted($0.value))" }
        var record = Record()
        record.add("variables", .record(values))
        return CommandOutcome(Output(record, humanLines: lines))
    }

    /// Single-quoted for POSIX shells.
    static func shellQuoted(_ value: String) -> String {
        "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
