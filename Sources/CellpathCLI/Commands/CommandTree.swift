import CommandLineKit

/// The whole command tree of cellpath; each command lives in its own file.
enum CommandTree {
    package static let root: CommandSpec = CommandSpec(
        name: "cellpath",
        abstract:
            "SIM-based mobile authentication (tru.ID SubscriberCheck style) from a Linux machine's cellular modem.",
        discussion: """
            cellpath finds the machine's WWAN modem, brings up its data bearer and sends a check_url
            request, with its whole redirect chain and DNS, through the cellular interface only.
            `cellpath sim` provides a complete simulated cellular world for trying it without hardware.
            """,
        options: RootOptions.self,
        subcommands: [
            CheckCommands.subscriberCheck,
            CheckCommands.phoneCheck,
            CheckCommands.simCheck,
            SimSwapCommand.spec,
            CheckCommands.coverage,
            VerifyCommand.spec,
            FetchCommand.spec,
            ModemsCommand.spec,
            BearerCommand.spec,
            DoctorCommand.spec,
            ReportCommand.spec,
            NumberCommand.spec,
            ConfigCommand.spec,
            ServeCommand.spec,
            SimCommand.spec,
            CompletionCommand.spec,
            help,
            GenerateDocsCommand.spec,
            CompleteWordsCommand.spec
        ],
        examples: [
            .init(
                "Check that a number is this SIM's, with the tru.ID API:",
                "cellpath subscriber-check +447940448591 --direct"),
            .init(
                "Check the SIM of a simulated world (made by cellpath sim up, as root):",
                "cellpath sim exec -- cellpath subscriber-check --direct"),
            .init("Show a command's help:", "cellpath help bearer up")
        ]
    )

    /// Listed in help; the parser answers `help <command>` itself.
    package static let help: CommandSpec = CommandSpec(
        name: "help", abstract: "Show help for a command.",
        options: HelpOptions.self,
        examples: [
            .init("List the commands:", "cellpath help"),
            .init("Explain a subcommand (as cellpath sim up --help does):", "cellpath help sim up")
        ])
}

/// The argument of `help`.
struct HelpOptions: CommandOptions {
    @VariadicArgument("command", help: "The command (and subcommand) to explain.", optional: true) var command: [String]
}
