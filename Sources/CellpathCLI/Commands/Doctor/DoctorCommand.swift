import CommandLineKit

/// `cellpath doctor`: what a real machine needs for cellpath, checked one by one, each passed,
/// warned or failed with its evidence and remedy. Runs in `cellpath-modem` (implemented in
/// Sources/ModemCommands/Doctor), the executable that links the modem libraries.
package enum DoctorCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "doctor",
        abstract: "Check the machine for cellpath: modems, owners, permissions, SIM, bearer, routing, clock, backend.",
        discussion: """
            Run it first on a real machine, and attach its --json output to a bug report. Each
            check is pass, warn, fail or skip, with its evidence and a remedy: the modems found and
            their shape (bus, driver, ports, net devices); who holds their control ports
            (ModemManager, NetworkManager, mbim-proxy/qmi-proxy, other processes, read from
            /proc/*/fd); the caller's access to the ports and its CAP_NET_ADMIN/CAP_NET_RAW; an FCC
            lock (radio off, the model on ModemManager's FCC-unlock list); the SIM, registration and
            signal; a QMI modem's raw-ip setting; the bearer and its interface (addresses, the
            source rule and table route cellpath adds, rp_filter, IPv6) against cellpath's record;
            the backend's name resolved through the bearer's DNS (one HEAD request through the
            bearer, when it is up); the clock (TLS needs it); the configuration files and whether
            credentials are present (never their values); and the configured backend over the default network (one HEAD
            request, never through the cellular interface). Without root, the checks that need it
            warn with the remedy. It changes nothing unless --fix: then it sets loose rp_filter on
            the interface of a connected bearer where strict filtering would drop its replies, and
            removes cellpath's record of a bearer the modem reports down (with cellpath's
            configuration of its interface, as bearer down does; never the modem's bearer), and
            reports each change in the check's "fixed". IMEI, ICCID, IMSI and MSISDN are masked unless
            --verbose-full. Exit 0 when no check failed (warnings included), 1 when one did; 64 when
            -m names no modem that was found; 73 when --capture cannot be written.
            """,
        options: Options.self,
        placement: .program(.modems),
        examples: [
            .init("Check the machine:", "cellpath doctor"),
            .init("Check the second modem only, and repair what doctor can:", "cellpath doctor -m 1 --fix"),
            .init(
                "For a bug report (as root): the checks as JSON, and a snapshot of the modems:",
                "cellpath doctor --json --capture modems.json")
        ])

    /// `doctor`'s options: the modem, how it is reached, the time limits, and `--fix`.
    package struct Options: CommandOptions {
        @Option(ModemOption.modem) package var modem: String?
        @OptionGroup package var backend: ModemBackendOptions
        @Option(
            "timeout", "seconds",
            help: "How long reading a modem, and the backend's request, may take each (default: 5).", .seconds)
        package var timeout: Double = 5
        @Flag(
            "fix",
            help: "Repair what doctor can (rp_filter, a stale bearer record), and say what it changed.")
        package var fix: Bool
        @Option(
            "capture", "file",
            help: """
                Also write a JSON snapshot of the modems (sysfs, what they report) to this file, mode 0600; \
                IMEI, IMSI, ICCID, MSISDN, serial numbers and addresses replaced by placeholders unless \
                --verbose-full.
                """)
        package var capture: String?

        package init() {}
    }
}
