import CellpathCore

/// Options accepted by every command, before or after the subcommand.
package struct GlobalOptions: Sendable, Equatable {
    package var verbose = false
    package var quiet = false
    package var disclosure: Disclosure = .redacted
    package var json = false
    package var color: ColorMode = .auto

    /// Their declarations.
    package struct Declarations: CommandOptions {
        @Flag("verbose", short: "v", help: "Print progress details and debug logs (personal data masked).")
        package var verbose: Bool
        @Flag(
            "verbose-full",
            help: "Like --verbose, and show personal data and secrets (IMSI, MSISDN, ICCID, tokens, codes).")
        package var verboseFull: Bool
        @Flag(
            "quiet", short: "q",
            help: """
                Print only results and errors: a titled result's first line; no details, progress or warnings (but a \
                downgrade's).
                """)
        package var quiet: Bool
        @Flag("json", help: "Print results as JSON (see docs/json.md).")
        package var json: Bool
        @Option("color", "when", help: "Colour human output: auto, always or never (default: auto).", .choice)
        package var color: ColorMode = .auto

        package init() {}
    }

    package init() {}

    /// The values given, checked: `--quiet` and `--verbose` exclude each other.
    package init(_ declared: Declarations, command: [String]) throws(UsageError) {
        verbose = declared.verbose || declared.verboseFull
        quiet = declared.quiet
        if verbose, quiet {
            throw UsageError("'--quiet' cannot be combined with '--verbose'", command: command)
        }
        disclosure = declared.verboseFull ? .full : .redacted
        json = declared.json
        color = declared.color
    }

    /// The values `parsed` gives.
    package init(_ parsed: ParsedCommand) throws(UsageError) {
        try self.init(try parsed.options(as: Declarations.self), command: parsed.path)
    }

    /// Lowest level printed: errors only with `-q`, debug with `-v`, warnings otherwise.
    package var logThreshold: LogLevel { quiet ? .error : verbose ? .debug : .warning }
}

/// The options of the root command: the global ones, and `--version`.
package struct RootOptions: CommandOptions {
    @OptionGroup package var global: GlobalOptions.Declarations
    @Flag(CommandLineParser.versionFlag) package var version: Bool

    package init() {}
}
