import CellpathCore
import CommandLineKit

/// `-m/--modem INDEX|IMEI|ICCID|PORT`: the one way every command that needs a modem names it
/// (`modems show`, `bearer`, `fetch --modem`). With a single modem it may be left out; with
/// several, the command lists them and exits 64. `--wait`: how long to wait for another cellpath
/// process that is changing the same modem's bearer. `--sim-slot`: the SIM slot to make active
/// before the bearer comes up (commands that bring one up).
package enum ModemOption {
    package static let modem = Option<String?>(
        "modem", short: "m", "modem",
        help: "The modem: its index, IMEI, ICCID or control port (default: the only modem).",
        ValueConversion.text.completed(as: .modems(includingAll: false)))

    package static let wait = Option<Double>(
        wrappedValue: 60, "wait", "seconds",
        help: """
            How long to wait for another cellpath process changing this modem's bearer (default: 60; 0: fail at once \
            with 75).
            """,
        .secondsOrZero)

    /// Counted from 1, as the modem's label and ModemManager count (mbimcli's mapping counts from 0).
    package static let simSlot = Option<SIMSlotChoice?>(
        "sim-slot", "n",
        help: """
            Make SIM slot n (from 1) active first on a dual-SIM modem; it stays active afterwards (default: the \
            active slot). The checks also take all: each SIM in turn, switched back at the end.
            """,
        ValueConversion { text throws(InvalidOptionValue) in
            if text == "all" { return .all }
            guard let number = Int(text), (1 ... 8).contains(number) else {
                throw InvalidOptionValue(expectation: "an integer from 1 to 8, or all")
            }
            return .slot(number)
        }.completed(as: .choices(["all"])))
}

/// `--sim-slot`'s value: one slot, or every slot in turn (`all`, the checks only).
package enum SIMSlotChoice: Sendable, Equatable {
    case slot(Int)
    case all

    /// The one slot asked for, for a command that brings one bearer up: `all` is refused (exit 64).
    package static func single(_ choice: SIMSlotChoice?, command: [String]) throws(UsageError) -> Int? {
        switch choice {
        case nil: return nil
        case .slot(let number): return number
        case .all:
            throw UsageError(
                "'--sim-slot all' walks every SIM in the checks (subscriber-check, phone-check, verify): "
                    + "this command brings one SIM's bearer up; give a slot number",
                command: command)
        }
    }
}

/// How the modem commands reach a modem: `--backend`, `--no-proxy`.
package struct ModemBackendOptions: CommandOptions {
    @Option(
        "backend", "name",
        help: """
            Reach the modems through ModemManager (modemmanager) or directly over MBIM or QMI (mbim, qmi); auto: \
            ModemManager when it runs on the system bus, else directly (default: auto).
            """,
        .choice)
    package var choice: ModemBackendChoice = .auto
    @Flag(
        "no-proxy",
        help: """
            Open the control ports directly, not through mbim-proxy or qmi-proxy (only ports no other program \
            reads).
            """)
    package var noProxy: Bool

    package init() {}
}

/// Who cellpath reaches a modem through (`--backend`, docs/operations.md).
package enum ModemBackendChoice: String, Sendable, CaseIterable {
    /// ModemManager when `org.freedesktop.ModemManager1` has an owner on the system bus, else directly.
    case auto
    /// ModemManager's D-Bus API.
    case modemmanager
    /// The control port directly (through its proxy), in the protocol it speaks.
    case mbim, qmi
}

/// The bearer of a command that brings one up only if it needs it (`fetch`, the checks), after
/// its `-m/--modem`.
package struct ModemPathOptions: CommandOptions {
    @SettingOption(.modemAPN) package var apn: String?
    @Flag(
        "keep-bearer",
        help: """
            With a modem: leave a bearer that this command brought up connected (cellpath bearer down takes it \
            down).
            """)
    package var keepBearer: Bool
    @Option(ModemOption.wait) package var wait: Double
    @Option(ModemOption.simSlot) package var simSlot: SIMSlotChoice?
    @OptionGroup package var backend: ModemBackendOptions

    package init() {}
}

/// A path through an interface that another tool configured: `-i/--interface`, `--dns`.
package struct InterfacePathOptions: CommandOptions {
    @Option(
        "interface", short: "i", "name",
        help: "Cellular network interface (e.g. wwan0); its address is read from it.",
        ValueConversion.text.completed(as: .interfaces))
    package var interface: String?
    @RepeatableOption("dns", "address", help: "DNS server of the bearer (repeat or separate with commas).")
    package var dns: [String]
    @Flag(
        "allow-any-interface",
        help: """
            Accept an --interface that is not a modem's (for tests: a check through it proves nothing about the \
            SIM).
            """)
    package var allowAnyInterface: Bool

    package init() {}

    /// The DNS servers given, the comma-separated ones split.
    package var dnsServers: [String] { dns.flatMap { $0.split(separator: ",").map(String.init) } }
}

/// The backend of a check: a development server (`--server`) or the tru.ID API (`--direct`).
package struct CheckBackendOptions: CommandOptions {
    @SettingOption(.server) package var server: String?
    @Flag(
        "direct",
        help: """
            Speak the tru.ID API directly, with the project's credentials (tru.json, configuration or environment).
            """)
    package var direct: Bool

    package init() {}
}

/// How the tru.ID API is reached: credentials, data residency, base URL.
package struct TruAPIOptions: CommandOptions {
    @SettingOption(.truJSON) package var truJSON: String?
    @SettingOption(.dataResidency) package var dataResidency: String?
    @SettingOption(.apiBase) package var apiBase: String?

    package init() {}
}

/// Field mode of the checks: repeated runs and their summary.
package struct FieldOptions: CommandOptions {
    @Option(
        "repeat", "n",
        help: "Run the check n times (field mode; one JSON line per run with --json).", .integer(in: 1 ... 100_000))
    package var repeatCount: Int = 1
    @Option(
        "interval", "seconds",
        help: "Seconds between the starts of repeated runs (default, or 0: one after the other).", .secondsOrZero)
    package var interval: Double?
    @Option(
        "metrics-file", "path",
        help: "Write the runs' summary in Prometheus text format to this file (atomically), for node_exporter.")
    package var metricsFile: String?
    @Option(
        "records-file", "path",
        help: """
            Append each run's JSON line, with the run's id, to this file (one whole line per run, synced before \
            the next run).
            """)
    package var recordsFile: String?
    @Flag(
        "resume",
        help: """
            Continue the last run of --records-file: same run id, its count continued up to --repeat (a new run \
            when the file holds none).
            """)
    package var resume: Bool
    @Option(
        "position", "lat,lon",
        help: "Record this position (decimal degrees, e.g. 51.5072,-0.1276) with each run.", .position)
    package var position: GeoPosition?

    package init() {}

    /// Whether even a single run is field mode (its JSON line and the summary): a metrics or
    /// records file, or a position to record.
    package var entersFieldMode: Bool { metricsFile != nil || recordsFile != nil || position != nil }
}

extension ValueConversion where Value == GeoPosition {
    /// `LAT,LON` in decimal degrees, within the globe's ranges.
    package static var position: ValueConversion {
        ValueConversion { text throws(InvalidOptionValue) in
            guard let position = GeoPosition(parsing: text) else {
                throw InvalidOptionValue(
                    noun: "position",
                    expectation: "latitude,longitude in decimal degrees (-90 to 90, -180 to 180), e.g. 51.5072,-0.1276")
            }
            return position
        }
    }
}
