/// `-m/--modem INDEX|IMEI|ICCID|PORT`: the one way every command that needs a modem names it
/// (`modems show`, `bearer`, `fetch --modem`). With a single modem it may be left out; with
/// several, the command lists them and exits 64.
package enum ModemOption {
    package static let modem = OptionKey<String>(
        "modem", short: "m", "modem", help: "The modem: its index, IMEI, ICCID or control port (default: the only modem).")

    /// The modem the command line names, if any.
    package static func selector(_ parsed: ParsedCommand) throws(UsageError) -> ModemSelector? {
        try parsed[modem].map { text throws(UsageError) in try ModemSelector(text, command: parsed.path) }
    }
}
