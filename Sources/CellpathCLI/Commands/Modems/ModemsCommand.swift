import CommandLineKit

/// `cellpath modems`: the WWAN modems found in sysfs, each with what it reports about its SIM,
/// network and bearer. Runs in `cellpath-modem` (implemented in Sources/ModemCommands), the executable that
/// links libmbim and libqmi.
package enum ModemsCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "modems",
        abstract: "List the WWAN modems with their SIM, registration, signal and bearer.",
        discussion: """
            Finds the MBIM and QMI control ports (cdc-wdm ports of cdc_mbim and qmi_wwan, and the
            WWAN subsystem's ports of PCIe modems), one modem per physical device (USB device or
            PCI function), and asks each modem; reading changes nothing on a modem. Modems without
            an MBIM or QMI port are listed with why: hardware with other WWAN ports only (the Intel
            L850) as unsupported, and USB router-mode modems (cdc_ether, cdc_ncm, rndis_host or
            huawei_cdc_ncm on a modem maker's device) with how to check through them (--interface).
            The list runs USB devices first, then PCI functions, each by sysfs path; the index
            counts every modem listed. Where ModemManager runs (its name owned on
            the system bus), the modems are read through it (--backend auto, the default; the
            backend column says so); else each over its own protocol. Ports are opened
            through mbim-proxy or qmi-proxy, as ModemManager does, so that they are shared;
            --no-proxy opens them directly, which works only while no other program (ModemManager,
            a proxy) reads them: it would take the answers. The proxies accept root clients only:
            other users open the ports directly. A modem that cannot be read is listed with its error and a warning;
            the list still exits 0 (cellpath modems show exits with the modem's error). IMEI,
            ICCID, IMSI and MSISDN are masked unless --verbose-full; -v traces every MBIM and QMI
            message, with them hidden. CELLPATH_SYSFS_ROOT and
            CELLPATH_DEV_ROOT (set by cellpath sim exec) make discovery look at another sysfs
            and /dev.
            """,
        options: Options.self,
        subcommands: [ModemsShowCommand.spec],
        placement: .program(.modems),
        examples: [
            .init("List the modems:", "cellpath modems"),
            .init("List them as JSON, IMEI and ICCID unmasked:", "cellpath modems --json --verbose-full"),
            .init(
                "Talk MBIM to them directly, not through ModemManager (a QMI modem is refused):",
                "cellpath modems --backend mbim")
        ])

    /// The options of every modem command: how the modems are reached, and how long reading one may take.
    package struct Options: CommandOptions {
        @OptionGroup package var backend: ModemBackendOptions
        @Option(
            "timeout", "seconds",
            help: """
                How long reading a modem may take, from opening its port to its last answer (default: 10).
                """, .seconds)
        package var timeout: Double?

        package init() {}
    }
}

/// `cellpath modems show [MODEM]`: everything one modem reports.
package enum ModemsShowCommand {
    package static let spec: CommandSpec = CommandSpec(
        name: "show",
        abstract: "Show everything one modem reports.",
        discussion: """
            The modem is named by its index, IMEI, ICCID or control port (cdc-wdm0, wwan0mbim0 or
            its /dev path), as the argument or with -m/--modem; with a single modem none is needed. With several and none named, or
            a name that matches none, the modems are listed and the command exits 64. A modem
            that cannot be read gives its error: exit 69 (error status, port vanished), 75 (no
            answer in time) or 77 (no permission to open the port). No SIM, a locked SIM, the
            radio off or a refused registration are states, shown as such.
            """,
        options: Options.self,
        placement: .program(.modems),
        examples: [
            .init("Show the only modem:", "cellpath modems show"),
            .init("Show the modem on a control port, as JSON:", "cellpath modems show cdc-wdm0 --json"),
            .init("Show the second modem:", "cellpath modems show 1")
        ])

    /// The modem, named as the argument or with -m, and how the modems are read.
    package struct Options: CommandOptions {
        @OptionalArgument(
            "modem",
            help: "The modem's index, IMEI, ICCID or control port (default: the only modem); or -m.")
        package var modem: String?
        @Option(ModemOption.modem) package var modemOption: String?
        @OptionGroup package var reading: ModemsCommand.Options

        package init() {}
    }
}
