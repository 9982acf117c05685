import CommandLineKit

/// `-m/--modem INDEX|IMEI|ICCID|PORT`: the one way every command that needs a modem names it
/// (`modems show`, `bearer`, `fetch --modem`). With a single modem it may be left out; with
/// several, the command lists them and exits 64.
package enum ModemOption {
    package static let modem = OptionKey<String>(
        "modem", short: "m", "modem", help: "The modem: its index, IMEI, ICCID or control port (default: the only modem).")

    /// `--wait`: how long to wait for another cellpath process that is changing the same modem's bearer.
    package static let wait = OptionKey<Double>(
        "wait", "seconds",
        help: "How long to wait for another cellpath process changing this modem's bearer (default: 60; 0: fail at once with 75).",
        .secondsOrZero)

    /// The wait that `--wait` gives (60 s by default).
    package static func lockWait(_ parsed: ParsedCommand) -> Duration {
        .milliseconds(Int64(((parsed[wait] ?? 60) * 1000).rounded()))
    }
}
