import CellpathCore

/// One option of a command: a flag (`--json`) or an option with a value (`--region GB`).
/// Declared through a `Flag`, `OptionKey` or `RepeatableOptionKey`, which also read it.
struct OptionSpec: Sendable {
    /// Whether the option takes a value, and how that value is read.
    enum Kind: Sendable {
        case flag
        /// `valueName` is the placeholder in help (`--region <cc>`); `convert` makes the typed
        /// value that `ParsedCommand` keeps.
        case value(valueName: String, convert: @Sendable (String) throws(InvalidOptionValue) -> any Sendable)
    }

    var long: String
    var short: Character?
    var kind: Kind
    var help: String
    /// The option may be given several times; every value is kept.
    var repeatable: Bool

    /// Placeholder of the value (`cc` → `--region <cc>`); nil for a flag.
    var valueName: String? {
        guard case .value(let valueName, _) = kind else { return nil }
        return valueName
    }

    /// `-r, --region <cc>` as shown in help.
    var synopsis: String {
        var text = short.map { "-\($0), " } ?? ""
        text += "--\(long)"
        if let valueName { text += " <\(valueName)>" }
        return text
    }
}

/// A positional argument of a command.
struct ArgumentSpec: Sendable {
    var name: String
    var help: String
    var optional: Bool = false
    /// Takes every remaining positional (e.g. `sim exec -- CMD…`).
    var variadic: Bool = false
    /// Takes every remaining positional as one value, the words joined by single spaces: a
    /// phone number written in groups (`number 07940 448591`).
    var joinsWords: Bool = false
}

/// What a command produced: records for the renderer, and the exit status it chose.
package struct CommandOutcome: Sendable {
    var output: Output?
    /// Usually an `ExitCode`; `sim exec` passes on its child's status.
    var exitStatus: Int32
    /// Why the command failed after producing output (a fetch's trace up to its failure): printed
    /// as `error:` on stderr, and as the `error` object of the JSON output.
    var failure: CommandFailure?

    package init(_ output: Output? = nil, exitCode: ExitCode = .success) {
        self.output = output
        self.exitStatus = exitCode.rawValue
    }

    package init(_ output: Output? = nil, exitStatus: Int32) {
        self.output = output
        self.exitStatus = exitStatus
    }

    /// The failure's message, if the command failed.
    package var failureMessage: String? { failure?.error.message }

    /// A failure that comes with output; the exit code follows the error's kind.
    package init(_ output: Output, failure: CommandFailure) {
        self.output = output
        self.failure = failure
        exitStatus = ExitCode.forKind(failure.error.kind).rawValue
    }
}

/// A command that stops, deep inside, with an outcome of its own instead of an error (a refused
/// modem choice with the modems listed): printed as any outcome, exit status included.
package struct CommandStopped: Error, Sendable {
    package var outcome: CommandOutcome

    package init(_ outcome: CommandOutcome) {
        self.outcome = outcome
    }
}

/// A command's failure: the error, and fields that the JSON error object carries after `kind`,
/// `message`, `hint` and `exit_code` (e.g. a fetch's `reason`, `hop`, `status`).
package struct CommandFailure: Sendable {
    var error: CellpathError
    var details: Record

    package init(_ error: CellpathError, details: Record = Record()) {
        self.error = error
        self.details = details
    }
}

/// How a command runs.
package enum CommandAction: Sendable {
    /// A task on Swift's pool, which the main thread waits for (so it must not need the main
    /// actor); the first SIGINT/SIGTERM cancels it.
    case async(@Sendable (ParsedCommand, CommandContext) async throws -> CommandOutcome)
    /// Synchronously on the main thread, with default signal handling: for blocking library
    /// calls that must stay off Swift's pool or own the process's signals (the simulator daemon).
    case blocking(@Sendable (ParsedCommand, CommandContext) throws -> CommandOutcome)
    /// Implemented by another executable, which passes the implementation to `CellpathCLI.main`;
    /// the others exec it (`Program`).
    case program(Program)
    /// Runs where `route` says from the parsed command line and the environment: a command
    /// that needs another executable's libraries only with some options (`fetch --modem` needs
    /// the modem layer's). The program that `route` names runs its own implementation of the
    /// command, or `local` (an `.async` action) if it has none; any other program execs it.
    case routed(route: @Sendable (ParsedCommand, [String: String]) -> Program,
                local: @Sendable (ParsedCommand, CommandContext) async throws -> CommandOutcome)
}

/// An example of a command's use: what it does, and the command line that does it.
struct CommandExample: Sendable {
    var purpose: String
    var commandLine: String

    init(_ purpose: String, _ commandLine: String) {
        self.purpose = purpose
        self.commandLine = commandLine
    }
}

/// A node of the command tree: a runnable command, a group of subcommands, or both.
struct CommandSpec: Sendable {
    var name: String
    var abstract: String
    var discussion: String? = nil
    var arguments: [ArgumentSpec] = []
    var options: [OptionSpec] = []
    var subcommands: [CommandSpec] = []
    /// Left out of help listings (tooling commands such as `generate-docs`).
    var hidden = false
    var action: CommandAction? = nil
    /// Two or three typical uses, at the end of the help and in the man page.
    var examples: [CommandExample] = []
    /// Its stderr is a log of one JSON object per line (`serve`'s access log): what the runtime
    /// itself says there (a signal's notice) is such a line too.
    var logsJSONLines = false

    func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }
}
