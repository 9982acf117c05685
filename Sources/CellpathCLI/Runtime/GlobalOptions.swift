import CellpathCore

/// Options accepted by every command, before or after the subcommand.
struct GlobalOptions: Sendable, Equatable {
    var verbose = false
    var quiet = false
    var disclosure: Disclosure = .redacted
    var json = false
    var color: ColorMode = .auto

    static let specs: [OptionSpec] = [
        .flag("verbose", short: "v", help: "Print progress details and debug logs (personal data masked)."),
        .flag("verbose-full", help: "Like --verbose, and show personal data and secrets (IMSI, MSISDN, ICCID, tokens, codes)."),
        .flag("quiet", short: "q", help: "Print only results and errors."),
        .flag("json", help: "Print results as JSON (see docs/json.md)."),
        .value("color", "when", help: "Colour human output: auto, always or never (default: auto).",
               choices: ColorMode.allCases.map(\.rawValue)),
        .flag("version", help: "Show the version."),
    ]

    init() {}

    init(_ parsed: ParsedCommand) throws(UsageError) {
        verbose = parsed.flag("verbose") || parsed.flag("verbose-full")
        quiet = parsed.flag("quiet")
        if verbose, quiet {
            throw UsageError("'--quiet' cannot be combined with '--verbose'", command: parsed.path)
        }
        disclosure = parsed.flag("verbose-full") ? .full : .redacted
        json = parsed.flag("json")
        color = parsed.value("color").flatMap(ColorMode.init(rawValue:)) ?? .auto
    }

    /// Lowest level printed: errors only with `-q`, debug with `-v`, warnings otherwise.
    var logThreshold: LogLevel { quiet ? .error : verbose ? .debug : .warning }
}
