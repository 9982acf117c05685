/// `cellpath sim env`: shell assignments that point cellpath and curl at the world.
package enum SimEnvCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "env",
        abstract: "Print the variables that point cellpath and curl at the world (eval \"$(cellpath sim env)\").",
        options: [SimCommand.prefixOption.spec],
        action: .program(.simulator))
}
