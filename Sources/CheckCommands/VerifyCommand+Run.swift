import CAMARA
import CellpathCLI
import CellpathCore
import CommandLineKit
import Configuration
import ProviderClients
import Workflow

extension CheckCommands {
    /// `verify`: the check commands' run (paths, bearers, field mode, output) against the
    /// provider's backend leg and device-leg rules.
    static func runVerify(_ options: VerifyOptions, _ context: CommandContext) async throws -> CommandOutcome {
        let name = options.provider
        try refuseOptionsOfOtherProviders(options, command: context.command)
        // With SIM Swap asked, a Number Verification's verdict is a SubscriberCheck's: exit 2 when the SIM changed.
        let product = options.simSwapWithin == nil ? name.verdictProduct : .subscriberCheck
        return try await runDeviceCheck(product, options.check, context) { configuration in
            let provider = try silentAuthProvider(name, options, configuration, context)
            // CAMARA's operator tells the device's number: without one given, it is asked for it.
            return CheckTarget(backend: provider.backend, deviceLeg: provider.deviceLeg, tellsNumber: name == .camara)
        }
    }

    /// The provider's client, with its profile's credentials.
    static func silentAuthProvider(
        _ name: ProviderName, _ options: VerifyOptions, _ configuration: EffectiveConfiguration,
        _ context: CommandContext
    ) throws -> any SilentAuthProvider {
        switch name {
        case .truid:
            return TruIDProvider(
                backend: try makeBackend(options.check.backend, configuration, context), product: name.verdictProduct)
        case .twilio:
            return try ProviderClients.twilio(configuration)
        case .vonage:
            return try ProviderClients.vonage(
                configuration, fallbacks: options.fallbacks, caller: context.caller,
                warn: { context.logger.warning("\($0)") })
        case .camara:
            let client = try ProviderClients.camara(configuration)
            let verification = CAMARANumberVerification(
                client: client, redirectURI: try configuration.requireCAMARARedirectURI())
            return try NumberVerificationProvider(
                name: "CAMARA Number Verification \(client.endpoint.apiRoot)", rules: "camara-oidc",
                verification: verification, hashed: options.hashed,
                simSwap: options.simSwapWithin.map { .init(api: .camara, maxAge: $0) })
        case .vonageNumberVerification:
            let client = try ProviderClients.vonageNetwork(
                for: name.rawValue, configuration, caller: context.caller, warn: { context.logger.warning("\($0)") })
            let verification = CAMARANumberVerification(
                client: client, api: .vonage, redirectURI: try configuration.requireVonageRedirectURI())
            return try NumberVerificationProvider(
                name: "Vonage Number Verification \(client.endpoint.apiRoot)", rules: "vonage-nv-oidc",
                verification: verification, hashed: options.hashed,
                simSwap: options.simSwapWithin.map { .init(api: .vonage, maxAge: $0) })
        }
    }

    /// tru.ID's options with another provider, and Vonage's with another, are usage errors.
    static func refuseOptionsOfOtherProviders(_ options: VerifyOptions, command: [String]) throws(UsageError) {
        let provider = options.provider
        func refuse(_ option: String, unless allowed: Bool, for owner: String) throws(UsageError) {
            if !allowed {
                throw UsageError("'\(option)' applies to --provider \(owner) only", command: command)
            }
        }
        let check = options.check
        try refuse("--server", unless: check.backend.server == nil || provider == .truid, for: "truid")
        try refuse("--direct", unless: !check.backend.direct || provider == .truid, for: "truid")
        try refuse("--operator-override", unless: check.operatorOverride == nil || provider == .truid, for: "truid")
        try refuse("--api-version", unless: check.apiVersion == .v0_2 || provider == .truid, for: "truid")
        try refuse("--fallback", unless: options.fallbacks.isEmpty || provider == .vonage, for: "vonage")
        try refuse("--hashed", unless: !options.hashed || provider.isNumberVerification, for: "camara or vonage-nv")
        // Without a number the operator tells the device's (device-phone-number), which has no hashed form.
        if options.hashed && check.phone == nil {
            throw UsageError(
                "'--hashed' needs the number to verify: without one, the operator tells the device's number, which CAMARA's device-phone-number has no hashed form of",
                command: command)
        }
        try refuse(
            "--sim-swap-within", unless: options.simSwapWithin == nil || provider.isNumberVerification,
            for: "camara or vonage-nv")
        // Number Verification's chain ends at the profile's redirect_uri.
        try refuse(
            "--redirect-url", unless: check.redirectURL == nil || !provider.isNumberVerification,
            for: "truid, twilio or vonage")
        if options.fallbacks.count > 2 {
            throw UsageError(
                "'--fallback' at most twice: a Vonage workflow has at most three channels", command: command)
        }
    }
}
