import CommandLineKit

/// `cellpath config`: the configuration group.
package enum ConfigCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "config",
        abstract: "Inspect cellpath's configuration.",
        discussion: """
            Configuration comes from /etc/cellpath/cellpath.conf, then $XDG_CONFIG_HOME/cellpath/cellpath.conf,
            then CELLPATH_* environment variables, then command-line flags (docs/configuration.md).
            """,
        subcommands: [ConfigShowCommand.spec],
        examples: [
            .init("Show every setting and where it came from:", "cellpath config show"),
            .init("See what an environment variable changes:", "CELLPATH_REGION=GB cellpath config show")
        ])
}
