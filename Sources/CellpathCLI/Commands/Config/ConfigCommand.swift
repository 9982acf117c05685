/// `cellpath config`: the configuration group.
enum ConfigCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "config",
        abstract: "Inspect cellpath's configuration.",
        discussion: """
            Configuration comes from /etc/cellpath/cellpath.conf, then $XDG_CONFIG_HOME/cellpath/cellpath.conf,
            then CELLPATH_* environment variables, then command-line flags (docs/configuration.md).
            """,
        subcommands: [ConfigShowCommand.spec])
}
