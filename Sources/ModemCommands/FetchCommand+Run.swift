import Bearers
import CellpathCLI
import CellpathCore
import ModemDiscovery
import Modems

extension FetchCommand {
    /// `cellpath fetch` routed here (`-m/--modem`, or a modem and no `--interface`): the
    /// front's fetch with the modem layer's path.
    package static let implementations: [String: CommandAction] = [
        "cellpath fetch": .async { parsed, context in try await run(parsed, context, pathProvider: { try modemPath($0, $1) }) },
    ]

    /// The modem layer's path provider: the bearer of `modem`, else of the modem that -m names
    /// (or the only one).
    package static func modemPath(_ parsed: ParsedCommand, _ context: CommandContext,
                                  modem chosen: DiscoveredModem? = nil) throws -> any CellularPathProvider {
        try checkModemPath(parsed)
        // Bringing the bearer up is bounded as `bearer up` is by default (fetch's --timeout is the chain's).
        let options = ModemPathProvider.Options(settings: BearerSettings(apn: try bearerAPN(parsed, context), ipType: try bearerIPType(parsed, context)),
                                                access: BearerCommand.access(parsed),
                                                keepBearer: parsed[keepBearer], opener: ModemBackendChoice.chosen(parsed).opener,
                                                lockWait: ModemOption.lockWait(parsed))
        return ModemPathProvider(options: options, records: BearerRecords(environment: context.environment), logger: context.logger,
                                 progress: { context.progress.step($0) }) {
            if let chosen { return chosen }
            switch try await BearerCommand.chooseModem(parsed, context) {
            case .chosen(let modem, _):
                return modem
            case .refused(let outcome):
                throw CellpathError(.usage, outcome.failureMessage ?? "no modem chosen", hint: "list them with cellpath modems, and name one with -m")
            }
        }
    }
}
