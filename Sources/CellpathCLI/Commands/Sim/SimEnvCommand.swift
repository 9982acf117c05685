import CommandLineKit

/// `cellpath sim env`: shell assignments that point cellpath and curl at the world.
package enum SimEnvCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "env",
        abstract: "Print the variables that point cellpath and curl at the world (eval \"$(cellpath sim env)\").",
        options: SimCommand.Options.self,
        placement: .program(.helper), privileges: .root,
        examples: [
            .init("Print the variables:", "cellpath sim env"),
            .init("Set them in this shell (as root: the world's files are root's):", "eval \"$(cellpath sim env)\"")
        ])
}
