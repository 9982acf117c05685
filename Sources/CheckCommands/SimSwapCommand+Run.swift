import CAMARA
import CellpathCLI
import CellpathCore
import CommandLineKit
import Configuration
import PhoneNumbers
import ProviderClients

extension SimSwapCommand {
    /// `sim-swap`: SIM Swap's check and retrieve-date for one number, with the `[camara]`
    /// profile's client-credentials token, or (`--provider vonage`) Vonage's by CIBA.
    static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        let configuration = try ConfigurationOptions.load(options, context)
        let number = try PhoneNumber.parse(
            options.phone, defaultRegion: try configuration.region, regionIsExplicit: options.region != nil)
        if !number.isMobileCapable {
            context.logger.warning("this is a \(number.type.numberPhrase): sim-swap needs a mobile number")
        }
        let (client, api): (CAMARAClient, SimSwapAPI) =
            switch options.provider {
            case .camara: (try ProviderClients.camara(configuration), .camara)
            case .vonage:
                (
                    try ProviderClients.vonageNetwork(
                        for: "vonage", configuration, caller: context.caller,
                        warn: { context.logger.warning("\($0)") }), .vonage
                )
            }
        context.progress.step("asking the operator's SIM Swap API")
        let swapped: Bool
        let date: SimSwapDate
        do throws(CAMARAError) {
            swapped = try await client.simSwapped(phoneNumber: number.e164, maxAge: options.maxAge, api: api)
            date = try await client.simSwapDate(phoneNumber: number.e164, api: api)
        } catch {
            throw error.cellpathError(of: client.endpoint)
        }
        try Task.checkCancellation()
        let disclosure = context.global.disclosure
        let maxAge = options.maxAge ?? CAMARAClient.simSwapDefaultMaxAge
        var record = Record()
        record.add("provider", .string(options.provider.rawValue))
        record.add("phone_number", .string(disclosure.reveal(number.e164, as: .msisdn)), label: "phone number")
        record.add("max_age_hours", .int(maxAge), label: "max age (hours)")
        record.add("swapped", .bool(swapped))
        record.add("latest_sim_change", .optional(date.latestSimChange), label: "latest SIM change")
        record.add(
            "monitored_period_days", date.monitoredPeriod.map(Value.int) ?? .null, label: "monitored period (days)")
        let verdict =
            swapped ? "the SIM CHANGED within \(maxAge) hours" : "the SIM did not change within \(maxAge) hours"
        return CommandOutcome(
            Output(record, humanLines: ["\(disclosure.reveal(number.e164, as: .msisdn)): \(verdict)"]),
            exitCode: swapped ? .simChanged : .success)
    }
}
