import CAMARA
import CellpathCLI
import CellpathCore
import CellpathCrypto
import CellularHTTP
import CommandLineKit
import Configuration
import PhoneNumbers

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
            case .camara: (try camaraClient(configuration), .camara)
            case .vonage: (try vonageNetworkClient(for: "vonage", configuration, context), .vonage)
            }
        context.progress.step("asking the operator's SIM Swap API")
        let swapped: Bool
        let date: SimSwapDate
        do throws(CAMARAError) {
            swapped = try await client.simSwapped(phoneNumber: number.e164, maxAge: options.maxAge, api: api)
            date = try await client.simSwapDate(phoneNumber: number.e164, api: api)
        } catch {
            throw error.cellpathError
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

    /// The `[camara]` profile's client: its key read (mode 0600 or stricter), the CA bundle
    /// checked. Also what a command with a CAMARA device leg starts from.
    static func camaraClient(_ configuration: EffectiveConfiguration) throws -> CAMARAClient {
        let settings = try configuration.requireCAMARA()
        let pem = try settings.readKey()
        let key: JWSKey
        do {
            key = try JWSKey(pem: pem)
        } catch {
            throw CellpathError(
                .configuration, "\(settings.keyFile) (named by \(settings.keyFileOrigin)): \(error.message)",
                hint: "key_file must hold the client's PEM private key: RSA of 2048 bits or more, or EC P-256.")
        }
        let caFile = try configuration.caFile
        if let caFile { try FetchCommand.checkCABundle(caFile, origin: configuration.origin(of: "http.cacert")) }
        return CAMARAClient(
            endpoint: CAMARAEndpoint(
                apiRoot: settings.apiRoot, issuer: settings.issuer, clientID: settings.clientID,
                authentication: .privateKeyJWT(key, keyID: nil), caFile: caFile, timeout: try configuration.timeout),
            http: HTTPClient(route: .defaultNetwork))
    }

    /// The client of Vonage's network APIs: the `[vonage]` application (its JWT authenticates the
    /// token and backchannel calls) and the endpoints of `vonage.network_api_base` and
    /// `vonage.oidc_base`. An API key instead of an application is a `.configuration` error.
    static func vonageNetworkClient(
        for provider: String, _ configuration: EffectiveConfiguration, _ context: CommandContext
    ) throws -> CAMARAClient {
        let profile = try configuration.requireVonageProfile(as: context.caller)
        guard case .application(let applicationID, _) = profile.credentials else {
            throw CellpathError(
                .configuration, "--provider \(provider) needs a Vonage application, not an API key",
                hint: "set [vonage] application_id and private_key, or CELLPATH_VONAGE_APPLICATION_ID "
                    + "and CELLPATH_VONAGE_PRIVATE_KEY")
        }
        let network = try configuration.requireVonageNetworkProfile(for: provider)
        let caFile = try configuration.caFile
        if let caFile { try FetchCommand.checkCABundle(caFile, origin: configuration.origin(of: "http.cacert")) }
        let endpoint = CAMARAEndpoint(
            apiRoot: network.apiBase, issuer: network.oidcBase, clientID: applicationID,
            authentication: .vonageApplication(try CheckCommands.vonageAuthentication(profile, context)),
            caFile: caFile, timeout: try configuration.timeout,
            metadata: ProviderMetadata(
                issuer: network.oidcBase, authorizationEndpoint: network.oidcBase + "/oauth2/auth",
                tokenEndpoint: network.apiBase + "/oauth2/token",
                backchannelAuthenticationEndpoint: network.apiBase + "/oauth2/bc-authorize"))
        return CAMARAClient(endpoint: endpoint, http: HTTPClient(route: .defaultNetwork))
    }
}
