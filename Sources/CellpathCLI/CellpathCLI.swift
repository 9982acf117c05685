import CommandLineKit

/// cellpath's command line: every executable parses argv against the one command tree, and runs
/// the commands whose spec places them in it (docs/architecture.md, Executables).
package enum CellpathCLI {
    /// Runs cellpath with `arguments` (without the program name) in the executable whose
    /// implementations are `implementations`, and returns the exit code. Called from main.swift's
    /// synchronous top level (`CommandLineProgram.main`).
    @MainActor
    package static func main(
        _ arguments: [String], environment: [String: String],
        implementations: ProgramImplementations
    ) -> Int32 {
        CommandLineProgram.main(
            arguments, environment: environment, root: CommandTree.root,
            implementations: implementations)
    }
}

extension ProgramImplementations {
    /// What the front `cellpath` runs: the client commands and `report`; it hands every other command over.
    package static let front = ProgramImplementations(
        .front,
        [
            .async(FetchCommand.spec, FetchCommand.run),
            .async(ConfigShowCommand.spec, ConfigShowCommand.run),
            .blocking(ReportCommand.spec, ReportCommand.run),
            .blocking(GenerateDocsCommand.spec, GenerateDocsCommand.run),
            .blocking(CompletionCommand.spec, CompletionCommand.run),
            .blocking(CompleteWordsCommand.spec, CompleteWordsCommand.run)
        ])
}
