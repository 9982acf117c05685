import CellpathCore
import Synchronization

/// One option of a command: a flag (`--json`) or an option with a value (`--region GB`).
/// Declared through a `Flag`, `Option` or `RepeatableOption` (`CommandOptions`), which also read it.
package struct OptionSpec: Sendable {
    /// Whether the option takes a value, and how that value is read.
    package enum Kind: Sendable {
        case flag
        /// `valueName` is the placeholder in help (`--region <cc>`); `convert` makes the typed
        /// value that `ParsedCommand` keeps.
        case value(valueName: String, convert: @Sendable (String) throws(InvalidOptionValue) -> any Sendable)
    }

    package var long: String
    package var short: Character?
    package var kind: Kind
    package var help: String
    /// The option may be given several times; every value is kept.
    package var repeatable: Bool
    /// What a shell offers for its value (nothing for a flag).
    package var completion: ValueCompletion = .none

    /// Placeholder of the value (`cc` → `--region <cc>`); nil for a flag.
    package var valueName: String? {
        guard case .value(let valueName, _) = kind else { return nil }
        return valueName
    }

    /// `-r, --region <cc>` as shown in help.
    package var synopsis: String {
        var text = short.map { "-\($0), " } ?? ""
        text += "--\(long)"
        if let valueName { text += " <\(valueName)>" }
        return text
    }
}

/// A positional argument of a command.
package struct ArgumentSpec: Sendable {
    package var name: String
    package var help: String
    /// What a shell offers for it.
    package var completion: ValueCompletion = .none
    package var optional: Bool = false
    /// Takes every remaining positional (e.g. `sim exec -- CMD…`).
    package var variadic: Bool = false
    /// Takes every remaining positional as one value, the words joined by single spaces: a
    /// phone number written in groups (`number 07940 448591`).
    package var joinsWords: Bool = false

    package init(
        name: String, help: String, optional: Bool = false, variadic: Bool = false, joinsWords: Bool = false,
        completion: ValueCompletion = .none
    ) {
        self.name = name
        self.help = help
        self.completion = completion
        self.optional = optional
        self.variadic = variadic
        self.joinsWords = joinsWords
    }
}

/// What a command produced: records for the renderer, and the exit status it chose.
package struct CommandOutcome: Sendable {
    package var output: Output?
    /// Usually an `ExitCode`; `sim exec` passes on its child's status.
    package var exitStatus: Int32
    /// Why the command failed after producing output (a fetch's trace up to its failure): printed
    /// as `error:` on stderr, and as the `error` object of the JSON output.
    package var failure: CommandFailure?

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
    package var error: CellpathError
    package var details: Record

    package init(_ error: CellpathError, details: Record = Record()) {
        self.error = error
        self.details = details
    }
}

/// How an implementation runs its command.
package enum CommandAction: Sendable {
    /// A task on Swift's pool, which the main thread waits for (so it must not need the main
    /// actor); the first SIGINT/SIGTERM cancels it.
    case async(@Sendable (ParsedCommand, CommandContext) async throws -> CommandOutcome)
    /// Synchronously on the main thread, with default signal handling: for blocking library
    /// calls that must stay off Swift's pool or own the process's signals (the simulator daemon).
    case blocking(@Sendable (ParsedCommand, CommandContext) throws -> CommandOutcome)
}

/// Which executable runs a command: its spec says it, and that executable's
/// `ProgramImplementations` holds the implementation; any other executable execs it.
package enum CommandPlacement: Sendable {
    /// Implemented by this program alone.
    case program(Program)
    /// Implemented by each of `programs`; `route` picks one of them from the parsed command line
    /// and the environment: a command that needs another executable's libraries only with some
    /// options (`fetch --modem` needs the modem layer's).
    case routed([Program], route: @Sendable (ParsedCommand, [String: String]) -> Program)

    /// Routed by the command's values in `Options`, its spec's own type.
    package static func routing<Options: CommandOptions>(
        among programs: [Program], by route: @escaping @Sendable (Options, [String: String]) -> Program
    ) -> CommandPlacement {
        .routed(programs) { parsed, environment in
            // The parser has bound every required argument: the values are there.
            guard let options = try? parsed.options(as: Options.self) else { return programs[0] }
            return route(options, environment)
        }
    }

    /// Every program that implements the command.
    package var programs: [Program] {
        switch self {
        case .program(let program): [program]
        case .routed(let programs, _): programs
        }
    }
}

/// A command's identity: the same for every copy of its spec, and told apart from every other
/// command's (two commands may share a name: `sim up`, `bearer up`).
package final class CommandIdentity: Sendable, Hashable {
    package init() {}

    package static func == (lhs: CommandIdentity, rhs: CommandIdentity) -> Bool { lhs === rhs }

    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// One command's implementation: the spec it implements, the options it reads, and how it runs.
package struct CommandImplementation: Sendable {
    package let command: CommandSpec
    /// The `CommandOptions` type `run` takes: the spec's own (`CommandImplementationTests`).
    package let optionsType: ObjectIdentifier
    package let action: CommandAction

    /// Runs as a task that the first SIGINT/SIGTERM cancels (`CommandAction.async`), with the
    /// command line's values in `Options`.
    package static func async<Options: CommandOptions>(
        _ command: CommandSpec, _ run: @escaping @Sendable (Options, CommandContext) async throws -> CommandOutcome
    ) -> Self {
        let action = CommandAction.async { parsed, context in
            try await run(try parsed.options(as: Options.self), context)
        }
        return CommandImplementation(command: command, optionsType: ObjectIdentifier(Options.self), action: action)
    }

    /// Runs on the main thread (`CommandAction.blocking`), with the command line's values in `Options`.
    package static func blocking<Options: CommandOptions>(
        _ command: CommandSpec, _ run: @escaping @Sendable (Options, CommandContext) throws -> CommandOutcome
    ) -> Self {
        let action = CommandAction.blocking { parsed, context in try run(try parsed.options(as: Options.self), context)
        }
        return CommandImplementation(command: command, optionsType: ObjectIdentifier(Options.self), action: action)
    }
}

/// What one executable runs: the implementations of the commands whose spec places them in it.
package struct ProgramImplementations: Sendable {
    package let program: Program
    package let commands: [CommandImplementation]

    package init(_ program: Program, _ commands: [CommandImplementation]) {
        self.program = program
        self.commands = commands
    }

    /// The implementation of `command`, if this program has one.
    package func action(for command: CommandSpec) -> CommandAction? {
        commands.first { $0.command.identity == command.identity }?.action
    }
}

/// An example of a command's use: what it does, and the command line that does it.
package struct CommandExample: Sendable {
    package var purpose: String
    package var commandLine: String

    package init(_ purpose: String, _ commandLine: String) {
        self.purpose = purpose
        self.commandLine = commandLine
    }
}

/// A node of the command tree: a runnable command, a group of subcommands, or both.
package struct CommandSpec: Sendable {
    package var name: String
    package var abstract: String
    package var discussion: String?
    /// The positional arguments its `Options` declares, in order.
    package var arguments: [ArgumentSpec] { declared.specs.arguments }
    /// The options its `Options` declares, in help order.
    package var options: [OptionSpec] { declared.specs.options }
    /// The `CommandOptions` type that declares `arguments` and `options`.
    package var optionsType: ObjectIdentifier
    private let declared: DeclaredSpecs
    package var subcommands: [CommandSpec]
    /// Left out of help listings (tooling commands such as `generate-docs`).
    package var hidden: Bool
    /// The executable that runs the command; nil for a group that only holds subcommands (and
    /// for `help`, which the parser answers).
    package var placement: CommandPlacement?
    /// What it needs beyond an ordinary user's rights, checked before it runs.
    package var privileges: CommandPrivileges
    /// Two or three typical uses, at the end of the help and in the man page.
    package var examples: [CommandExample]
    /// Its stderr is a log of one JSON object per line (`serve`'s access log): what the runtime
    /// itself says there (a signal's notice) is such a line too.
    package var logsJSONLines: Bool
    /// Tells this command from every other, for finding its implementation.
    package let identity = CommandIdentity()

    /// A command whose arguments and options `options` declares.
    package init<Options: CommandOptions>(
        name: String, abstract: String, discussion: String? = nil,
        options: Options.Type = NoOptions.self, subcommands: [CommandSpec] = [],
        hidden: Bool = false, placement: CommandPlacement? = nil, privileges: CommandPrivileges = .none,
        examples: [CommandExample] = [], logsJSONLines: Bool = false
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.declared = DeclaredSpecs(Options.self)
        self.optionsType = ObjectIdentifier(Options.self)
        self.subcommands = subcommands
        self.hidden = hidden
        self.placement = placement
        self.privileges = privileges
        self.examples = examples
        self.logsJSONLines = logsJSONLines
    }

    package func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }

    /// The one program that runs this command and every command below it; nil when they run in
    /// several programs, or one of them is routed by its options.
    package var soleProgram: Program? {
        var programs: Set<Program> = []
        var routed = false
        func visit(_ node: CommandSpec) {
            switch node.placement {
            case .program(let program): programs.insert(program)
            case .routed: routed = true
            case nil: break
            }
            node.subcommands.forEach(visit)
        }
        visit(self)
        return routed || programs.count != 1 ? nil : programs.first
    }
}

/// The arguments and options that a `CommandOptions` type declares, read by reflection the first
/// time they are needed and kept: a command line is parsed reading only the commands on its path,
/// not the whole tree, which every executable builds at start-up.
private final class DeclaredSpecs: Sendable {
    private let type: any CommandOptions.Type
    private let read = Mutex<(arguments: [ArgumentSpec], options: [OptionSpec])?>(nil)

    init(_ type: any CommandOptions.Type) {
        self.type = type
    }

    var specs: (arguments: [ArgumentSpec], options: [OptionSpec]) {
        read.withLock { read in
            if let read { return read }
            let declarations = type.init().declarations
            let specs = (declarations.compactMap(\.argumentSpec), declarations.compactMap(\.optionSpec))
            read = specs
            return specs
        }
    }
}
