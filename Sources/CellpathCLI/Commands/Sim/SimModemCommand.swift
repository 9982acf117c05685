import CommandLineKit

/// `cellpath sim modem reset|swap-sim|remove-sim|report-dns|unlock-fcc` and `sim suspend|resume`:
/// what happens to real modems, made to happen to the world's (docs/simulator.md "Lifecycle events").
package enum SimModemCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "modem",
        abstract: "Make a simulated modem reset, change its SIM, report other DNS servers or lift its FCC lock.",
        subcommands: [reset, swapSIM, removeSIM, reportDNS, unlockFCC],
        examples: [
            .init("Reset modem 0; it comes back as cdc-wdm1/wwan1:", "cellpath sim modem reset --renumber"),
            .init("Put another SIM into modem 1:", "cellpath sim modem swap-sim --modem 1")
        ])

    /// The options every `sim modem` command takes.
    package struct ModemOptions: CommandOptions {
        @Option("modem", "index", help: "Modem index in the scenario (default: 0).", .integer(in: 0 ... 31))
        package var modem: Int = 0
        @SettingOption(.simPrefix) package var prefix: String?

        package init() {}
    }

    /// `sim modem reset`'s options.
    package struct ResetOptions: CommandOptions {
        @OptionGroup package var target: ModemOptions
        @Flag("renumber", help: "Come back under the next free names (cdc-wdm1, wwan1…) and a new ifindex.")
        package var renumber: Bool
        @Option(
            "slow-ms", "ms", help: "Answer this much later for a while after the reset (default: the scenario's).",
            .integer(in: 0 ... 60_000))
        package var slowMs: Int?
        @Option(
            "slow-seconds", "seconds", help: "How long the slow answers last (default: the scenario's).",
            .integer(in: 1 ... 3600))
        package var slowSeconds: Int?

        package init() {}
    }

    /// `sim modem swap-sim`'s options.
    package struct SwapOptions: CommandOptions {
        @OptionGroup package var target: ModemOptions
        @Option("iccid", "digits", help: "The new SIM's ICCID, 18 to 20 digits (default: a new SIM's).")
        package var iccid: String?
        @Option("imsi", "digits", help: "The new SIM's IMSI, 6 to 15 digits (default: a new SIM's).")
        package var imsi: String?
        @Option("msisdn", "number", help: "The new SIM's number, E.164 (default: a new SIM's).")
        package var msisdn: String?

        package init() {}
    }

    /// `sim modem report-dns`'s options.
    package struct DNSOptions: CommandOptions {
        @OptionGroup package var target: ModemOptions
        @VariadicArgument(
            "server", help: "The DNS servers to report (e.g. 0.0.0.0 ::); none: the carrier's again.",
            optional: true)
        package var servers: [String]

        package init() {}
    }

    package static let reset = CommandSpec(
        name: "reset",
        abstract: "Reset the modem: its ports and net device vanish and come back; the bearer is lost.",
        options: ResetOptions.self, placement: .program(.helper), privileges: .root,
        examples: [
            .init("Reset modem 0; it comes back as cdc-wdm1/wwan1:", "cellpath sim modem reset --renumber"),
            .init(
                "Reset modem 1 and have it answer 2 s late for 10 s:",
                "cellpath sim modem reset --modem 1 --slow-ms 2000 --slow-seconds 10")
        ])

    package static let swapSIM = CommandSpec(
        name: "swap-sim",
        abstract: "Pull the modem's SIM out and insert another, with the indications of a hot-swap.",
        options: SwapOptions.self, placement: .program(.helper), privileges: .root,
        examples: [
            .init("Insert another SIM into modem 0:", "cellpath sim modem swap-sim"),
            .init("One with this number:", "cellpath sim modem swap-sim --msisdn +447700900999")
        ])

    package static let removeSIM = CommandSpec(
        name: "remove-sim",
        abstract: "Pull the modem's SIM out.",
        options: ModemOptions.self, placement: .program(.helper), privileges: .root,
        examples: [
            .init("Pull modem 0's SIM:", "cellpath sim modem remove-sim"),
            .init(
                "Pull modem 2's, in the world created with --prefix lab-:",
                "cellpath sim modem remove-sim --modem 2 --prefix lab-")
        ])

    package static let reportDNS = CommandSpec(
        name: "report-dns",
        abstract: "Make the modem report these DNS servers for its bearer (firmware that reports 0.0.0.0).",
        options: DNSOptions.self, placement: .program(.helper), privileges: .root,
        examples: [
            .init("Report 0.0.0.0 and :: as DNS servers:", "cellpath sim modem report-dns 0.0.0.0 ::"),
            .init("Report the carrier's again:", "cellpath sim modem report-dns")
        ])

    package static let unlockFCC = CommandSpec(
        name: "unlock-fcc",
        abstract: "Lift the modem's FCC lock (until it is re-plugged), as its unlock procedure would.",
        options: ModemOptions.self, placement: .program(.helper), privileges: .root,
        examples: [
            .init("Unlock modem 0:", "cellpath sim modem unlock-fcc"),
            .init("Unlock the L860 of the zoo (modem 9):", "cellpath sim modem unlock-fcc --modem 9")
        ])

    /// `sim suspend`.
    package static let suspend = CommandSpec(
        name: "suspend",
        abstract: "Suspend the simulated machine: modems lose their bearers; ModemManager removes its modems.",
        options: SimCommand.Options.self, placement: .program(.helper), privileges: .root,
        examples: [
            .init("Suspend the machine:", "cellpath sim suspend"),
            .init("The world created with --prefix lab-:", "cellpath sim suspend --prefix lab-")
        ])

    /// `sim resume`.
    package static let resume = CommandSpec(
        name: "resume",
        abstract: "Wake the simulated machine: ModemManager probes its modems again.",
        options: SimCommand.Options.self, placement: .program(.helper), privileges: .root,
        examples: [
            .init("Wake the machine:", "cellpath sim resume"),
            .init("The world created with --prefix lab-:", "cellpath sim resume --prefix lab-")
        ])
}
