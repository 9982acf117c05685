import CellpathCore

/// Options accepted by every command, before or after the subcommand.
package struct GlobalOptions: Sendable, Equatable {
    package var verbose = false
    package var quiet = false
    package var disclosure: Disclosure = .redacted
    package var json = false
    package var color: ColorMode = .auto

    package static let verbose = Flag("verbose", short: "v", help: "Print progress details and debug logs (personal data masked).")
    package static let verboseFull = Flag(
        "verbose-full", help: "Like --verbose, and show personal data and secrets (IMSI, MSISDN, ICCID, tokens, codes).")
    package static let quiet = Flag("quiet", short: "q", help: "Print only results and errors: a titled result's first line; no details, progress or warnings (but a downgrade's).")
    package static let json = Flag("json", help: "Print results as JSON (see docs/json.md).")
    package static let color = OptionKey<ColorMode>(
        "color", "when", help: "Colour human output: auto, always or never (default: auto).", .choice)

    package static let specs: [OptionSpec] = [
        verbose.spec, verboseFull.spec, quiet.spec, json.spec, color.spec, CommandLineParser.versionFlag.spec,
    ]

    package init() {}

    package init(_ parsed: ParsedCommand) throws(UsageError) {
        verbose = parsed[Self.verbose] || parsed[Self.verboseFull]
        quiet = parsed[Self.quiet]
        if verbose, quiet {
            throw UsageError("'--quiet' cannot be combined with '--verbose'", command: parsed.path)
        }
        disclosure = parsed[Self.verboseFull] ? .full : .redacted
        json = parsed[Self.json]
        color = parsed[Self.color] ?? .auto
    }

    /// Lowest level printed: errors only with `-q`, debug with `-v`, warnings otherwise.
    package var logThreshold: LogLevel { quiet ? .error : verbose ? .debug : .warning }
}
