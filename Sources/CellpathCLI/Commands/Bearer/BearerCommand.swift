import CellpathCore
import CommandLineKit

/// `cellpath bearer up | down | status`: a modem's data bearer, brought up with its interface
/// configured, taken down, or shown. Runs in `cellpath-modem` (implemented in Sources/ModemCommands).
package enum BearerCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "bearer",
        abstract: "Bring a modem's data bearer up or down, or show it.",
        discussion: """
            cellpath keeps what it brought up in /run/cellpath (CELLPATH_STATE_DIR names another
            directory), so that bearer down from another process takes down exactly that. A bearer
            connected by another program (ModemManager, mbimcli, qmicli) is reused as it is and left
            connected. Where ModemManager runs, the bearer commands go through it (--backend): a
            bearer cellpath brings up is one that ModemManager creates and connects for it, and
            deletes again at bearer down. Configuring the interface needs CAP_NET_ADMIN (sudo; see
            docs/operations.md).
            """,
        subcommands: [BearerUpCommand.spec, BearerDownCommand.spec, BearerStatusCommand.spec],
        examples: [
            .init("Bring the only modem's bearer up with an APN:", "cellpath bearer up --apn internet"),
            .init("Follow its state:", "cellpath bearer status --watch"),
            .init("Take it down again:", "cellpath bearer down")
        ])

    /// The options of every bearer command: the modem, how it is reached, and the time limits.
    package struct Options: CommandOptions {
        @Option(ModemOption.modem) package var modem: String?
        @OptionGroup package var backend: ModemBackendOptions
        @Option(
            "timeout", "seconds",
            help: "How long the command may take, waiting for registration included (default: 30).", .seconds)
        package var timeout: Double = 30
        @Option(ModemOption.wait) package var wait: Double

        package init() {}
    }
}

/// `cellpath bearer up`: the steps from SIM to a configured interface.
package enum BearerUpCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "up",
        abstract: "Bring the modem's bearer up (or reuse it) and configure its interface.",
        discussion: """
            Steps, each logged with the modem's index (-v) and bounded by --timeout: SIM ready (the
            PIN from --pin-file is entered only when the SIM asks for it and at least 2 attempts are
            left) → radio on → registered (following the modem's indications) → packet service
            attached → a bearer already connected is reused, else one is connected → its IP
            configuration → the interface: up, MTU, the address /32 (IPv6: the address with its
            prefix), per family a default route with a metric worse than the others (unbound traffic
            keeps its route), the rule 'from <address> lookup <table>' with a default route through
            the interface in that table, loose rp_filter (IPv4) → the interface is checked to hold
            the addresses → the path is printed. On failure or
            Ctrl-C, everything this run changed is undone, newest first. The APN is --apn, else the
            modem.apn setting (CELLPATH_APN), else the modem's provisioned context. The password
            comes from --password-file or CELLPATH_BEARER_PASSWORD, never from the command line.
            --ip-type asks for IPv4, IPv6 or both (default: the modem.ip_type setting, CELLPATH_IP_TYPE,
            else ipv4v6): the network grants what it allows of it (an IPv4-only network narrows
            ipv4v6 to IPv4). --sim-slot N first makes SIM slot N (from 1) of a dual-SIM modem the
            active one, and leaves it active (docs/operations.md). Exit 0 with the path; 64 several
            modems and none named, or a SIM slot the modem does not have; 65 a bad PIN file; 66 an
            unreadable file; 69 no SIM (in the active slot), an eSIM without an enabled profile,
            registration denied, connection refused, no modem, the bearer dropped; 75 not registered
            or no answer in time, another cellpath process changing the bearer beyond --wait, or a
            bearer up on another SIM slot; 77 the SIM locked (no PIN or
            too few attempts left, wrong PIN) or no CAP_NET_ADMIN; 130 cancelled.
            """,
        options: Options.self,
        placement: .program(.modems), privileges: .netAdmin,
        examples: [
            .init("Bring the only modem's bearer up with its provisioned APN:", "cellpath bearer up"),
            .init(
                "The second modem, IPv4 only, on an APN of your own:",
                "cellpath bearer up -m 1 --apn internet --ip-type ipv4"),
            .init(
                "Enter the SIM's PIN from a file if the SIM asks for it:",
                "cellpath bearer up --pin-file /etc/cellpath/sim.pin")
        ])

    /// `bearer up`'s options: the bearer's settings and the secrets it may need.
    package struct Options: CommandOptions {
        @OptionGroup package var bearer: BearerCommand.Options
        @SettingOption(.bearerAPN) package var apn: String?
        @Option(ConfigurationOptions.ipType) package var ipType: BearerIPType?
        @Option(ModemOption.simSlot) package var simSlot: SIMSlotChoice?
        @Option(
            "auth", "method",
            help: """
                Authentication the APN asks for: none, pap, chap or mschapv2 (default: none, or chap with --user).
                """, .choice)
        package var auth: BearerAuthentication?
        @Option("user", "name", help: "User name for the APN.") package var user: String?
        @Option(
            "password-file", "file",
            help: "File holding the APN's password (default: CELLPATH_BEARER_PASSWORD, else none).")
        package var passwordFile: String?
        @Option(
            "pin-file", "file",
            help: "File holding the SIM's PIN, entered only if the SIM asks.") package var pinFile: String?

        package init() {}
    }

}

/// `cellpath bearer down`: disconnects what cellpath brought up and removes its configuration.
package enum BearerDownCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "down",
        abstract: "Take down the bearer cellpath brought up and remove its interface configuration.",
        discussion: """
            Removes the address, routes and rule that cellpath added and restores rp_filter, then
            disconnects the bearer if cellpath connected it (any run, any process: see
            /run/cellpath). A bearer that another program connected is left connected unless
            --force. A bearer that running cellpath commands use (checks, fetches) is left to the
            last of them, which takes it down ("bearer": "in-use", exit 0) unless --force. A record
            that is not cellpath's own, or names what is not the modem's, is refused (65) and moved
            aside; --force then removes what has cellpath's shape on the modem's interface.
            Idempotent: a bearer already down exits 0.
            """,
        options: Options.self,
        placement: .program(.modems), privileges: .netAdmin,
        examples: [
            .init("Take down the bearer cellpath brought up on the only modem:", "cellpath bearer down"),
            .init("On the second modem, also a bearer another program connected:", "cellpath bearer down -m 1 --force")
        ])

    /// `bearer down`'s options.
    package struct Options: CommandOptions {
        @OptionGroup package var bearer: BearerCommand.Options
        @Flag(
            "force",
            help: """
                Also disconnect a bearer that cellpath did not bring up, or that running cellpath commands use; \
                without a record, remove what has cellpath's shape on the interface.
                """)
        package var force: Bool

        package init() {}
    }
}

/// `cellpath bearer status`: the bearer as the modem and the kernel report it.
package enum BearerStatusCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "status",
        abstract: "Show the modem's bearer: state, address, DNS, operator, uptime, byte counters.",
        discussion: """
            Uptime counts from when cellpath connected the bearer or first found it; the byte
            counters are the interface's. --watch keeps following the modem's indications and
            prints the status again whenever it changes, one JSON object per line with --json,
            until Ctrl-C (exit 0). Over QMI a call's indications go to the client that started it:
            --watch listens on that client (both, one per family, for dual stack) for a bearer that
            cellpath brought up, and reads the modem again every few seconds while no such bearer
            is up.
            """,
        options: Options.self,
        placement: .program(.modems),
        examples: [
            .init("Show the only modem's bearer:", "cellpath bearer status"),
            .init(
                "Follow the second modem's bearer, one JSON object per change:",
                "cellpath bearer status -m 1 --watch --json")
        ])

    /// `bearer status`'s options.
    package struct Options: CommandOptions {
        @OptionGroup package var bearer: BearerCommand.Options
        @Flag(
            "watch",
            help: "Keep printing the status whenever it changes (JSON Lines with --json).") package var watch: Bool

        package init() {}
    }
}
