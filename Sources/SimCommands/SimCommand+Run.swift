import CellpathCLI
import CommandLineKit

extension ProgramImplementations {
    /// The `sim` commands, which `cellpath-helper` runs (Sources/HelperCommands).
    package static let simulatorCommands: [CommandImplementation] = [
        .blocking(SimUpCommand.spec, SimUpCommand.run),
        .blocking(SimDownCommand.spec, SimDownCommand.run),
        .blocking(SimStatusCommand.spec, SimStatusCommand.run),
        .blocking(SimBearerCommand.connect) { try SimBearerCommand.run(connect: true, $0, $1) },
        .blocking(SimBearerCommand.disconnect) { try SimBearerCommand.run(connect: false, $0, $1) },
        .blocking(SimExecCommand.spec, SimExecCommand.run),
        .blocking(SimEnvCommand.spec, SimEnvCommand.run),
        .blocking(SimLogCommand.spec, SimLogCommand.run),
        .blocking(SimProfilesCommand.spec, SimProfilesCommand.run),
        .blocking(SimModemCommand.reset, SimModemCommand.runReset),
        .blocking(SimModemCommand.swapSIM, SimModemCommand.runSwapSIM),
        .blocking(SimModemCommand.removeSIM, SimModemCommand.runRemoveSIM),
        .blocking(SimModemCommand.reportDNS, SimModemCommand.runReportDNS),
        .blocking(SimModemCommand.unlockFCC, SimModemCommand.runUnlockFCC),
        .blocking(SimModemCommand.suspend) { try SimModemCommand.runSleep(suspend: true, $0, $1) },
        .blocking(SimModemCommand.resume) { try SimModemCommand.runSleep(suspend: false, $0, $1) }
    ]
}

extension SimCommand {

    /// The world's prefix: `given` (`--prefix`), else the configuration's `[sim] prefix`.
    static func prefix(_ given: String?, _ context: CommandContext) throws -> String {
        if let given { return given }
        return try ConfigurationOptions.load(NoOptions(), context).simPrefix
    }
}
