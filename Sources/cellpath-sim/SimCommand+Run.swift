import CellpathCLI

extension SimCommand {
    /// The commands of `cellpath sim`, by command name: what this executable runs.
    static let implementations: [String: CommandAction] = [
        "cellpath sim up": .blocking(SimUpCommand.run),
        "cellpath sim down": .blocking(SimDownCommand.run),
        "cellpath sim status": .blocking(SimStatusCommand.run),
        "cellpath sim bearer connect": .blocking { try SimBearerCommand.run(connect: true, $0, $1) },
        "cellpath sim bearer disconnect": .blocking { try SimBearerCommand.run(connect: false, $0, $1) },
        "cellpath sim exec": .blocking(SimExecCommand.run),
        "cellpath sim env": .blocking(SimEnvCommand.run),
        "cellpath sim log": .blocking(SimLogCommand.run),
    ]

    /// The world's prefix: `--prefix`, else the configuration's `[sim] prefix`.
    static func prefix(_ parsed: ParsedCommand, _ context: CommandContext) throws -> String {
        if let prefix = parsed[prefixOption] { return prefix }
        return try ConfigurationOptions.load(parsed, context).simPrefix
    }
}
