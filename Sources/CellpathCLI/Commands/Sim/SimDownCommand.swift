import CommandLineKit

/// `cellpath sim down`: stops everything the simulator started and deletes the world. Idempotent.
package enum SimDownCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "down",
        abstract: "Stop the simulator and delete its namespaces, devices and files (also after a crash).",
        discussion: """
            Stops the daemon, then every process still running in the world's namespaces or holding
            a modem's control port (mbim-proxy or qmi-proxy started with -p, what 'sim exec' left
            running): SIGTERM, then SIGKILL after 3 s. Reports what it stopped and removed,
            including what the daemon removed itself.
            """,
        options: SimCommand.Options.self,
        placement: .program(.helper), privileges: .root,
        examples: [
            .init("Remove the default world:", "cellpath sim down"),
            .init("Remove the world created with --prefix lab-:", "cellpath sim down --prefix lab-")
        ])
}
