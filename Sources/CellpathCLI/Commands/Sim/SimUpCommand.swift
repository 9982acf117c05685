import CommandLineKit

/// `cellpath sim up`: builds the world and starts its daemon (detached, or in the foreground).
package enum SimUpCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "up",
        abstract: "Create the simulated world and start its daemon.",
        discussion: """
            Creates the namespaces, links and routes, starts DNS, the fake tru.ID API, the carrier and
            the simulated MBIM/QMI modems, then prints how to use the world. The daemon runs detached
            (pid file and log under /run/cellpath-sim/<prefix>/) unless --foreground. --device-capture
            replays a device: each modem of the capture becomes a simulated modem of its shape, with
            simulated identities in place of the placeholders (docs/simulator.md, "Replaying a capture").
            """,
        options: Options.self,
        placement: .program(.helper), privileges: .root,
        examples: [
            .init("Create the built-in world (one MBIM modem):", "cellpath sim up"),
            .init(
                "A world of your own scenario, beside the default one:",
                "cellpath sim up --scenario two-modems.json --prefix lab-"),
            .init(
                "A modem of the shape a user's doctor --capture recorded:", "cellpath sim up --device-capture dev.json")
        ])

    /// `sim up`'s options.
    package struct Options: CommandOptions {
        @Option("scenario", "file", help: "Scenario file (JSON, docs/simulator.md); default: the built-in world.")
        package var scenario: String?
        @SettingOption(.simPrefix) package var prefix: String?
        @Flag(
            "modemmanager",
            help: "Also run ModemManager on the modems, on a private D-Bus bus (`sim env` exports its address).")
        package var modemManager: Bool
        @Flag("foreground", help: "Run the daemon in this process until SIGINT/SIGTERM.") package var foreground: Bool
        @RepeatableOption(
            "device-capture", "file",
            help: """
                A device capture (doctor --capture, sim profiles --capture): a modem of each captured shape, \
                after the scenario's modems or alone without --scenario. Repeatable.
                """)
        package var deviceCaptures: [String]

        package init() {}
    }
}
