import CellpathCore
import Glibc

/// The command-line program: parses argv, runs the command with cancellation on
/// SIGINT/SIGTERM, renders its output and maps any error to the exit code.
public enum CellpathCLI {
    /// Runs cellpath with `arguments` (without the program name) and returns the exit code.
    /// `program` is the executable that calls this; `implementations` are the commands that the
    /// tree assigns to it, by command name (`cellpath sim up`). Commands of another program exec it.
    /// Must be called from main.swift's synchronous top level: blocking commands run on the main
    /// thread, which otherwise waits for the command's task.
    @MainActor
    package static func main(_ arguments: [String], environment: [String: String], program: Program,
                             implementations: [String: CommandAction] = [:]) -> Int32 {
        let root = CommandTree.root
        let help = HelpFormatter(root: root)
        let parser = CommandLineParser(root: root)

        let result: ParseResult
        do {
            result = try parser.parse(arguments)
        } catch {
            Terminal.writeErr(help.usageError(error))
            return ExitCode.usage.rawValue
        }

        switch result {
        case .help(let path):
            Terminal.writeOut(help.help(for: path))
            return ExitCode.success.rawValue
        case .version:
            Terminal.writeOut("cellpath \(CellpathVersion.current)\n")
            return ExitCode.success.rawValue
        case .run(let action, let parsed):
            return run(action, parsed, arguments: arguments, program: program, implementations: implementations,
                       environment: environment, help: help)
        }
    }

    @MainActor
    private static func run(_ action: CommandAction, _ parsed: ParsedCommand, arguments: [String], program: Program,
                            implementations: [String: CommandAction], environment: [String: String],
                            help: HelpFormatter) -> Int32 {
        let global: GlobalOptions
        do {
            global = try GlobalOptions(parsed)
        } catch {
            Terminal.writeErr(help.usageError(error))
            return ExitCode.usage.rawValue
        }
        let colorErr = global.color.enabled(isTTY: Terminal.stderrIsTTY, environment: environment)
        let context = CommandContext(
            global: global, environment: environment,
            logger: Logger(threshold: global.logThreshold, disclosure: global.disclosure),
            progress: Progress(enabled: Terminal.stderrIsTTY && !global.quiet))
        let renderer = Renderer(json: global.json,
                                color: global.color.enabled(isTTY: Terminal.stdoutIsTTY, environment: environment))

        do {
            let outcome: CommandOutcome
            switch action {
            case .program(let other) where other != program:
                throw other.exec(arguments)
            case .program:
                guard let implementation = implementations[parsed.commandName] else {
                    throw CellpathError(.internalError, "\(program.rawValue) lacks the implementation of '\(parsed.commandName)'")
                }
                outcome = try perform(implementation, parsed, context)
            case let action:
                outcome = try perform(action, parsed, context)
            }
            if let output = outcome.output { Terminal.writeOut(renderer.render(output)) }
            return outcome.exitStatus
        } catch let error as UsageError {
            Terminal.writeErr(help.usageError(error))
            return ExitCode.usage.rawValue
        } catch {
            let code = ExitCode.forError(error)
            report(error, code: code, json: global.json, color: colorErr)
            return code.rawValue
        }
    }

    /// Runs a command's implementation: blocking on the main thread, or as a task that the first
    /// SIGINT/SIGTERM cancels while the main thread waits for it.
    @MainActor
    private static func perform(_ action: CommandAction, _ parsed: ParsedCommand,
                                _ context: CommandContext) throws -> CommandOutcome {
        switch action {
        case .blocking(let action):
            return try action(parsed, context)
        case .async(let action):
            let completion = Completion<CommandOutcome>()
            let task = Task.detached { await completion.finish { try await action(parsed, context) } }
            let signals = SignalHandling.install { task.cancel() }
            defer { signals?.stop() }
            return try completion.wait()
        case .program(let other):
            throw CellpathError(.internalError, "an implementation cannot hand '\(parsed.commandName)' over to \(other.rawValue)")
        }
    }

    /// Prints a failure: `error: …` (and its hint) on stderr; with `--json` also an error object on stdout.
    private static func report(_ error: any Error, code: ExitCode, json: Bool, color: Bool) {
        let message: String
        var hint: String?
        var kind: String
        switch error {
        case let error as CellpathError:
            message = error.message
            hint = error.hint
            kind = error.kind.rawValue
        case is CancellationError:
            message = "cancelled"
            kind = FailureKind.cancelled.rawValue
        default:
            message = "internal error: \(error)"
            kind = FailureKind.internalError.rawValue
        }
        var text = Style.red.apply("error:", enabled: color) + " " + message + "\n"
        if let hint { text += "hint: " + hint + "\n" }
        Terminal.writeErr(text)
        if json {
            var record = Record()
            record.add("kind", .string(kind))
            record.add("message", .string(message))
            record.add("hint", .optional(hint))
            record.add("exit_code", .int(Int(code.rawValue)))
            Terminal.writeOut(JSONWriter.string(.record(Record([Field(key: "error", label: "error", value: .record(record))]))) + "\n")
        }
    }
}
