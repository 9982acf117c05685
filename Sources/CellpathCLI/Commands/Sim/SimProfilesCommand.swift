import CommandLineKit

/// `cellpath sim profiles`: the device profiles a scenario modem can take (`modems[i].device`),
/// with the real models each stands for.
package enum SimProfilesCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "profiles",
        abstract: "List the device profiles a simulated modem can take, with the real models they stand for.",
        discussion: """
            Each profile fixes what the kernel and the firmware present for a real model: bus and ids,
            driver, ports and their names, the net device, the protocol. Name one as a scenario modem's
            "device"; scripts/zoo-scenario.json brings every profile up side by side. The names shown are
            those of modem 0. See docs/simulator-modems.md, "Device zoo". Needs no root.

            With --capture FILE and --device NAME, writes profile NAME as a device capture, in the format
            of `cellpath doctor --capture`: `cellpath sim up --device-capture FILE` builds a modem of that
            shape. Exit 64 for an unknown profile, 73 when FILE cannot be written.
            """,
        options: Options.self,
        placement: .program(.helper),
        examples: [
            .init("List the profiles:", "cellpath sim profiles"),
            .init("As JSON:", "cellpath sim profiles --json"),
            .init(
                "Write a profile as a device capture:",
                "cellpath sim profiles --device quectel-ec25-qmi --capture ec25.json")
        ])

    /// `sim profiles`' options: a profile to write as a device capture.
    package struct Options: CommandOptions {
        @Option("device", "name", help: "The profile to write as a device capture (with --capture).")
        package var device: String?
        @Option("capture", "file", help: "Write profile --device as a device capture to this file, mode 0600.")
        package var capture: String?

        package init() {}
    }
}
