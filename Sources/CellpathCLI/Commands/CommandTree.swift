/// The whole command tree of cellpath; each command lives in its own file.
enum CommandTree {
    static let root: CommandSpec = CommandSpec(
        name: "cellpath",
        abstract: "SIM-based mobile authentication (tru.ID SubscriberCheck style) from a Linux machine's cellular modem.",
        discussion: """
            cellpath finds the machine's WWAN modem, brings up its data bearer and sends a check_url
            request, with its whole redirect chain and DNS, through the cellular interface only.
            `cellpath sim` provides a complete simulated cellular world for trying it without hardware.
            """,
        options: GlobalOptions.specs,
        subcommands: [
            CheckCommands.subscriberCheck,
            CheckCommands.phoneCheck,
            CheckCommands.simCheck,
            CheckCommands.coverage,
            FetchCommand.spec,
            ModemsCommand.spec,
            BearerCommand.spec,
            NumberCommand.spec,
            ConfigCommand.spec,
            ServeCommand.spec,
            SimCommand.spec,
            help,
            GenerateDocsCommand.spec,
        ]
    )

    /// Listed in help; the parser answers `help <command>` itself.
    static let help: CommandSpec = CommandSpec(
        name: "help", abstract: "Show help for a command.",
        arguments: [ArgumentSpec(name: "command", help: "The command (and subcommand) to explain.",
                                 optional: true, variadic: true)])
}
