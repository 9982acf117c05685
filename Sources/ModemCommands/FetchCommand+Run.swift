import Bearers
import CellpathCLI
import CellpathCore
import CellularHTTP
import CommandLineKit
import ModemDiscovery
import Modems
import Synchronization

extension FetchCommand {
    /// `cellpath fetch` routed here (`-m/--modem`, or a modem and no `--interface`): the
    /// front's fetch with the modem layer's path.
    static func runWithModem(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        try checkModemPath(options.interfacePath, command: context.command)
        try checkOutputs(options, context)
        let slot = try SIMSlotChoice.single(options.modemPath.simSlot, command: context.command)
        // libcurl loads while the modem is chosen, instead of after it.
        CellularHTTPClient.prepareInBackground()
        let modem = try await chosenModem(options.modem, options.modemPath.backend, context)
        return try await run(options, context) { options, context in
            try modemPath(
                options.modemPath, options.interfacePath, ipType: options.ipType, context, modem: modem, simSlot: slot,
                justDiscovered: true)
        }
    }

    /// The modem that -m names (or the only one), chosen before anything is sent. Several modems
    /// and none named, or a name that matches none, stops the command as `bearer` commands do:
    /// the modems listed, and exit 64.
    package static func chosenModem(
        _ name: String?, _ backend: ModemBackendOptions,
        _ context: CommandContext
    ) async throws -> DiscoveredModem {
        // Reading the modems is bounded as `bearer` commands' is by default (--timeout is the chain's).
        switch try await BearerCommand.chooseModem(name, backend, timeout: BearerCommand.defaultTimeout, context) {
        case .chosen(let modem, _): modem
        case .refused(let outcome): throw CommandStopped(outcome)
        }
    }

    /// The modem layer's path provider: the bearer of `modem`, on SIM slot `simSlot` (nil: the
    /// active one); `startsOnRecordedBearer` for a caller that confirms the path beside its run
    /// (`ModemPathProvider.Options`); `justDiscovered` when `modem` was read from sysfs a moment
    /// ago, so that the first bring-up takes it as it is instead of reading sysfs again (later ones
    /// read it, to follow a reset). (`interfacePath` must name no interface or DNS server: the
    /// bearer gives them.)
    package static func modemPath(
        _ path: ModemPathOptions, _ interfacePath: InterfacePathOptions,
        ipType: BearerIPType?, _ context: CommandContext,
        modem: DiscoveredModem, simSlot: Int?, startsOnRecordedBearer: Bool = false, justDiscovered: Bool = false
    ) throws -> ModemPathProvider {
        try checkModemPath(interfacePath, command: context.command)
        // Bringing the bearer up is bounded as `bearer up` is by default (fetch's --timeout is the chain's).
        let addressing = try ConfigurationOptions.bearerAddressing(apn: path.apn, ipType: ipType, context)
        let settings = BearerSettings(apn: addressing.apn, ipType: addressing.ipType)
        let options = ModemPathProvider.Options(
            settings: settings,
            access: BearerCommand.access(
                path.backend,
                timeout: BearerCommand.defaultTimeout),
            keepBearer: path.keepBearer, opener: path.backend.choice.opener,
            lockWait: ModemOption.lockWait(path.wait), simSlot: simSlot, startsOnRecordedBearer: startsOnRecordedBearer)
        let discovery = ModemDiscovery(roots: ModemsCommand.deviceRoots(context))
        let fresh = Mutex(justDiscovered ? modem : nil)
        return ModemPathProvider(
            options: options, records: BearerRecords(environment: context.environment), logger: context.logger,
            progress: { context.progress.step($0) }
        ) {
            // The modem as it is now: after a reset it may be back under other names.
            fresh.withLock { $0.take() } ?? discovery.current(modem) ?? modem
        }
    }

    /// Refuses what contradicts a path from the modem: its interface and DNS servers are the bearer's.
    package static func checkModemPath(_ path: InterfacePathOptions, command: [String]) throws(UsageError) {
        if path.interface != nil {
            throw UsageError(
                "'--modem' cannot be combined with '--interface': the modem's bearer gives the interface",
                command: command)
        }
        if !path.dns.isEmpty {
            throw UsageError(
                "'--dns' cannot be combined with '--modem': the bearer gives its DNS servers",
                command: command)
        }
    }
}
