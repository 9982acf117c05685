import CellpathCore
import Glibc
import Synchronization
import SystemSupport

/// The command-line program: parses argv against a command tree, runs the command with
/// cancellation on SIGINT/SIGTERM, renders its output and maps any error to the exit code.
package enum CommandLineProgram {
    /// Runs the command that `arguments` (without the program name) name in the tree `root`, and
    /// returns the exit code. `implementations` are those of the executable that calls this: a
    /// command whose spec places it in another executable execs that one, as soon as its leading
    /// words tell (`CommandLineParser.programNamedByWords`), else after parsing.
    /// Must be called from main.swift's synchronous top level: blocking commands run on the main
    /// thread, which otherwise waits for the command's task. A privileged process (file
    /// capabilities, set-user-ID, root under sudo) ignores the environment's overrides it must
    /// not follow (`ProcessPrivilege.screen`), with a warning naming them.
    @MainActor
    package static func main(
        _ arguments: [String], environment: [String: String], root: CommandSpec,
        implementations: ProgramImplementations
    ) -> Int32 {
        // A command that the leading words place in another program is handed over at once, before
        // this one parses or sets up anything that program does again. When it cannot be run, the
        // whole command line is parsed below, and its usage error or the missing program reported.
        if let program = CommandLineParser(root: root).programNamedByWords(arguments),
            program != implementations.program
        {
            _ = program.exec(arguments)
        }
        let privilege = ProcessPrivilege.current(environment: environment)
        let (screened, ignored) = privilege.screen(environment)
        // The caller's own home directory is no override: dropped like one, but not announced.
        let announced = ignored.filter { $0 != "HOME" || environment["HOME"] != privilege.caller?.homeDirectory }
        let environment = screened
        let help = HelpFormatter(root: root)
        let parser = CommandLineParser(root: root)

        let result: ParseResult
        do {
            result = try parser.parse(arguments)
        } catch {
            return fail(error, help: help, json: wantsJSON(arguments), warnings: [], color: false)
        }

        switch result {
        case .help(let path):
            Terminal.writeOut(help.help(for: path))
            return ExitCode.success.rawValue
        case .version:
            if wantsJSON(arguments) {
                var record = Record()
                record.add("name", "cellpath")
                record.add("version", .string(CellpathVersion.current))
                record.add("warnings", .list([]))
                Terminal.writeOut(Renderer(json: true, color: false).render(Output(record)))
            } else {
                Terminal.writeOut("cellpath \(CellpathVersion.current)\n")
            }
            return ExitCode.success.rawValue
        case .run(let command, let parsed):
            return run(
                command, parsed, arguments: arguments, implementations: implementations,
                environment: environment, privilege: privilege, ignored: ignored, announced: announced, help: help)
        }
    }

    @MainActor
    private static func run(
        _ command: CommandSpec, _ parsed: ParsedCommand, arguments: [String],
        implementations: ProgramImplementations, environment: [String: String],
        privilege: ProcessPrivilege, ignored: [String], announced: [String], help: HelpFormatter
    ) -> Int32 {
        let global: GlobalOptions
        do {
            global = try GlobalOptions(parsed)
        } catch {
            return fail(error, help: help, json: wantsJSON(arguments), warnings: [], color: false)
        }
        let jsonLog = command.logsJSONLines
        let colorErr = !jsonLog && global.color.enabled(isTTY: Terminal.stderrIsTTY, environment: environment)
        let context = CommandContext(
            global: global, command: parsed.path, environment: environment,
            logger: Logger(
                threshold: global.logThreshold, disclosure: global.disclosure,
                sink: jsonLog ? JSONLinesLogSink() as any LogSink : TerminalLogSink(), warnings: WarningRecorder()),
            progress: Progress(enabled: Terminal.stderrIsTTY && !global.quiet), caller: privilege.caller)
        let renderer = Renderer(
            json: global.json,
            color: global.color.enabled(isTTY: Terminal.stdoutIsTTY, environment: environment), quiet: global.quiet)

        do {
            let program = implementations.program
            let target =
                switch command.placement {
                case .routed(_, let route): route(parsed, environment)
                case .program(let target): target
                case nil: program
                }
            guard target == program else {
                context.logger.debug(
                    "cellpath \(CellpathVersion.current): handing '\(parsed.commandName)' to \(target.rawValue)")
                throw target.exec(arguments)
            }
            context.logger.debug(
                "cellpath \(CellpathVersion.current): \(parsed.path.dropFirst().joined(separator: " ")) (\(program.rawValue), pid \(getpid()))"
            )
            // Said by the process that runs the command (a helper screens its environment itself).
            ProcessEnvironment.remove(ignored)
            if !announced.isEmpty { context.logger.warning("\(ignoredOverridesWarning(announced, privilege))") }
            guard let action = implementations.action(for: command) else {
                throw CellpathError(
                    .internalError, "\(program.rawValue) lacks the implementation of '\(parsed.commandName)'")
            }
            try command.privileges.check(parsed.path.dropFirst().joined(separator: " "))
            let outcome = try perform(action, parsed, context, jsonLog: jsonLog)
            finish(
                outcome, renderer: renderer, warnings: context.logger.warnings?.all ?? [], colorErr: colorErr,
                jsonLog: jsonLog)
            return outcome.exitStatus
        } catch let stopped as CommandStopped {
            finish(
                stopped.outcome, renderer: renderer, warnings: context.logger.warnings?.all ?? [], colorErr: colorErr)
            return stopped.outcome.exitStatus
        } catch {
            return fail(
                error, help: help, path: parsed.path, json: global.json, warnings: context.logger.warnings?.all ?? [],
                color: colorErr)
        }
    }

    /// Why the environment's `ignored` variables were ignored.
    private static func ignoredOverridesWarning(_ ignored: [String], _ privilege: ProcessPrivilege) -> String {
        let names = ignored.joined(separator: ", ")
        if case .rootUnderSudo = privilege {
            return "ignoring \(names): as root under sudo, cellpath follows only paths that no user but root can change"
        }
        return
            "ignoring \(names): cellpath runs with privileges its caller does not have (file capabilities or set-user-ID), "
            + "and takes no paths or credentials from the caller's environment"
    }

    /// Prints a command's outcome: its details on stderr, its output on stdout (with `warnings`,
    /// and with the `error` object first when it failed, in JSON) and its failure on stderr.
    private static func finish(
        _ outcome: CommandOutcome, renderer: Renderer, warnings: [String], colorErr: Bool, jsonLog: Bool = false
    ) {
        defer { ProgressLine.end() }
        if var output = outcome.output {
            if renderer.json {
                if let failure = outcome.failure {
                    output.record.fields.insert(
                        errorField(
                            failure.error, code: ExitCode.forKind(failure.error.kind),
                            details: failure.details), at: 0)
                }
                if output.record["warnings"] == nil { output.record.add("warnings", .list(warnings.map(Value.string))) }
            }
            let details = renderer.renderDetails(output)
            if !details.isEmpty { Terminal.writeErr(details) }
            Terminal.writeOut(renderer.render(output))
        }
        if let failure = outcome.failure {
            Terminal.writeErr(
                jsonLog ? JSONLinesLogSink.errorLine(failure.error) : errorText(failure.error, color: colorErr))
        }
    }

    /// Runs a command's implementation: blocking on the main thread, or as a task that the first
    /// SIGINT/SIGTERM cancels while the main thread waits for it (`jsonLog`: the signal's notice
    /// as a JSON line).
    @MainActor
    private static func perform(
        _ action: CommandAction, _ parsed: ParsedCommand,
        _ context: CommandContext, jsonLog: Bool
    ) throws -> CommandOutcome {
        switch action {
        case .blocking(let action):
            return try action(parsed, context)
        case .async(let action):
            let completion = Completion<CommandOutcome>()
            let running = Mutex<Task<Void, Never>?>(nil)
            // Without the watcher Ctrl-C could not cancel the command and clean up: it does not start.
            let signals = try SignalHandling.install(jsonLines: jsonLog) { running.withLock { $0?.cancel() } }
            defer { signals.stop() }
            let task = Task.detached { await completion.finish { try await action(parsed, context) } }
            running.withLock { $0 = task }
            return try completion.wait()
        }
    }

    /// Prints a failure and returns its exit code: `error: …` and its hint on stderr (usage errors
    /// with the command's usage line); with `--json` also `{"error": {…}, "warnings": […]}` on stdout.
    private static func fail(
        _ error: any Error, help: HelpFormatter, path: [String] = [], json: Bool, warnings: [String],
        color: Bool
    ) -> Int32 {
        ProgressLine.end()
        let code = ExitCode.forError(error)
        let failure: CellpathError
        switch error {
        case let error as UsageError:
            Terminal.writeErr(help.usageError(error))
            failure = CellpathError(.usage, error.message)
        case let error as CellpathError where error.kind == .usage:
            Terminal.writeErr(
                help.usageError(UsageError(error.message, command: path))
                    + (error.hint.map { "hint: \($0.terminalSafe)\n" } ?? ""))
            failure = error
        case let error as CellpathError:
            failure = error
        case let error as SystemError:
            failure = CellpathError(error)
        case is CancellationError:
            failure = CellpathError(.cancelled, "cancelled")
        default:
            failure = CellpathError(.internalError, "internal error: \(error)")
        }
        if failure.kind != .usage {
            let jsonLog = help.command(at: path)?.logsJSONLines ?? false
            Terminal.writeErr(jsonLog ? JSONLinesLogSink.errorLine(failure) : errorText(failure, color: color))
        }
        if json {
            let record = Record([
                errorField(failure, code: code),
                Field(key: "warnings", label: "warnings", value: .list(warnings.map(Value.string)))
            ])
            Terminal.writeOut(JSONWriter.string(.record(record)) + "\n")
        }
        return code.rawValue
    }

    /// `error: MESSAGE` and `hint: HINT` lines for stderr.
    private static func errorText(_ error: CellpathError, color: Bool) -> String {
        var text = Style.red.apply("error:", enabled: color) + " " + error.message.terminalSafe + "\n"
        if let hint = error.hint { text += "hint: " + hint.terminalSafe + "\n" }
        return text
    }

    /// The JSON `error` object (docs/json.md, Errors): kind, message, hint, exit code, then `details`.
    private static func errorField(_ error: CellpathError, code: ExitCode, details: Record = Record()) -> Field {
        var record = Record()
        record.add("kind", .string(error.kind.rawValue))
        record.add("message", .string(error.message))
        record.add("hint", .optional(error.hint))
        record.add("exit_code", .int(Int(code.rawValue)))
        record.fields += details.fields
        return Field(key: "error", label: "error", value: .record(record))
    }

    /// Whether `--json` was given, for errors found before the options are parsed: any
    /// `--json` before a `--`.
    private static func wantsJSON(_ arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains("--json")
    }
}
