import Bearers
import CellpathCLI
import CellpathCore
import CommandLineKit
import ModemDiscovery
import Modems

extension FetchCommand {
    /// `cellpath fetch` routed here (`-m/--modem`, or a modem and no `--interface`): the
    /// front's fetch with the modem layer's path.
    static func runWithModem(_ parsed: ParsedCommand, _ context: CommandContext) async throws -> CommandOutcome {
        try checkModemPath(parsed)
        try checkOutputs(parsed, context)
        let modem = try await chosenModem(parsed, context)
        return try await run(parsed, context, pathProvider: { try modemPath($0, $1, modem: modem) })
    }

    /// The modem that -m names (or the only one), chosen before anything is sent. Several modems
    /// and none named, or a name that matches none, stops the command as `bearer` commands do:
    /// the modems listed, and exit 64.
    package static func chosenModem(_ parsed: ParsedCommand, _ context: CommandContext) async throws -> DiscoveredModem {
        switch try await BearerCommand.chooseModem(parsed, context) {
        case .chosen(let modem, _): modem
        case .refused(let outcome): throw CommandStopped(outcome)
        }
    }

    /// The modem layer's path provider: the bearer of `modem`.
    package static func modemPath(_ parsed: ParsedCommand, _ context: CommandContext,
                                  modem: DiscoveredModem) throws -> any CellularPathProvider {
        try checkModemPath(parsed)
        // Bringing the bearer up is bounded as `bearer up` is by default (fetch's --timeout is the chain's).
        let options = ModemPathProvider.Options(settings: BearerSettings(apn: try bearerAPN(parsed, context), ipType: try ConfigurationOptions.ipType(parsed, context)),
                                                access: BearerCommand.access(parsed),
                                                keepBearer: parsed[keepBearer], opener: ModemBackendChoice.chosen(parsed).opener,
                                                lockWait: ModemOption.lockWait(parsed))
        return ModemPathProvider(options: options, records: BearerRecords(environment: context.environment), logger: context.logger,
                                 progress: { context.progress.step($0) }) { modem }
    }
}
