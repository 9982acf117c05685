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
            """,
        placement: .program(.simulator),
        examples: [
            .init("List the profiles:", "cellpath sim profiles"),
            .init("As JSON:", "cellpath sim profiles --json")
        ])
}
