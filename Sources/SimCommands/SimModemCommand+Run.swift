import CellpathCLI
import CellpathCore
import CommandLineKit
import Simulator
import SimulatorScenario

extension SimModemCommand {
    static func runReset(_ options: ResetOptions, _ context: CommandContext) throws -> CommandOutcome {
        let event = SimulatedWorld.LifecycleEvent.reset(
            renumber: options.renumber, slowMs: options.slowMs,
            slowSeconds: options.slowSeconds)
        return try lifecycle(event, options.target, "reset", context)
    }

    static func runSwapSIM(_ options: SwapOptions, _ context: CommandContext) throws -> CommandOutcome {
        // A new SIM of its own: the default identities of a SIM no modem of a world starts with.
        let fresh = SimulatedSIM(index: 2 * Scenario.maximumModems + options.target.modem)
        let sim = SIMIdentity(
            iccid: options.iccid ?? fresh.iccid, imsi: options.imsi ?? fresh.imsi,
            msisdn: options.msisdn ?? fresh.msisdn)
        return try lifecycle(.swapSIM(sim), options.target, "SIM swapped", context)
    }

    static func runRemoveSIM(_ options: ModemOptions, _ context: CommandContext) throws -> CommandOutcome {
        try lifecycle(.removeSIM, options, "SIM removed", context)
    }

    static func runReportDNS(_ options: DNSOptions, _ context: CommandContext) throws -> CommandOutcome {
        let servers = options.servers.isEmpty ? nil : options.servers
        let what = servers.map { "reports DNS \($0.joined(separator: " "))" } ?? "reports the carrier's DNS"
        return try lifecycle(.reportDNS(servers), options.target, what, context)
    }

    static func runUnlockFCC(_ options: ModemOptions, _ context: CommandContext) throws -> CommandOutcome {
        try SimulatedWorld.unlockFCC(modem: options.modem, prefix: try SimCommand.prefix(options.prefix, context))
        return CommandOutcome(Output(title: "modem \(options.modem): FCC lock lifted", Record()))
    }

    static func runSleep(
        suspend: Bool, _ options: SimCommand.Options, _ context: CommandContext
    ) throws -> CommandOutcome {
        let prefix = try SimCommand.prefix(options.prefix, context)
        let status = try SimulatedWorld.lifecycle(suspend ? .suspend : .resume, prefix: prefix)
        return CommandOutcome(
            Output(
                title: suspend ? "suspended" : "resumed", try SimStatusCommand.record(status, context),
                humanLines: SimStatusCommand.modemTable(status, context)))
    }

    /// Sends `event` for the chosen modem and shows the world afterwards.
    private static func lifecycle(
        _ event: SimulatedWorld.LifecycleEvent, _ options: ModemOptions, _ what: String,
        _ context: CommandContext
    ) throws -> CommandOutcome {
        let prefix = try SimCommand.prefix(options.prefix, context)
        let status = try SimulatedWorld.lifecycle(event, modem: options.modem, prefix: prefix)
        return CommandOutcome(
            Output(
                title: "modem \(options.modem): \(what)", try SimStatusCommand.record(status, context),
                humanLines: SimStatusCommand.modemTable(status, context)))
    }
}
