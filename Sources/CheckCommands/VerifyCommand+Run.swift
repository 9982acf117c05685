import CAMARA
import CellpathCLI
import CellpathCore
import CellpathCrypto
import CellularHTTP
import CommandLineKit
import Configuration
import Workflow

extension CheckCommands {
    /// `verify`: the check commands' run (paths, bearers, field mode, output) against the
    /// provider's backend leg and device-leg rules.
    static func runVerify(_ options: VerifyOptions, _ context: CommandContext) async throws -> CommandOutcome {
        let name = options.provider
        try refuseOptionsOfOtherProviders(options, command: context.command)
        return try await runDeviceCheck(name.verdictProduct, options.check, context) { configuration in
            let provider = try silentAuthProvider(name, options, configuration, context)
            return CheckTarget(backend: provider.backend, deviceLeg: provider.deviceLeg)
        }
    }

    /// The provider's client, with its profile's credentials.
    static func silentAuthProvider(
        _ name: ProviderName, _ options: VerifyOptions, _ configuration: EffectiveConfiguration,
        _ context: CommandContext
    ) throws -> any SilentAuthProvider {
        let http = HTTPClient(route: .defaultNetwork)
        switch name {
        case .truid:
            return TruIDProvider(
                backend: try makeBackend(options.check.backend, configuration, context), product: name.verdictProduct)
        case .twilio:
            let profile = try configuration.requireTwilioProfile()
            let account = TwilioVerifyAccount(
                baseURL: profile.apiBase, accountSID: profile.accountSID, authToken: profile.authToken,
                serviceSID: profile.serviceSID)
            return TwilioVerifyClient(
                account: account, http: http, caFile: try checkedCAFile(configuration),
                timeout: try configuration.timeout)
        case .vonage:
            let profile = try configuration.requireVonageProfile(as: context.caller)
            let account = VonageVerifyAccount(
                baseURL: profile.apiBase, brand: profile.brand,
                authentication: try vonageAuthentication(profile, context))
            return VonageVerifyClient(
                account: account, fallbacks: options.fallbacks, http: http, caFile: try checkedCAFile(configuration),
                timeout: try configuration.timeout)
        case .camara:
            let client = try SimSwapCommand.camaraClient(configuration)
            let verification = CAMARANumberVerification(
                client: client, redirectURI: try configuration.requireCAMARARedirectURI())
            return try NumberVerificationProvider(
                name: "CAMARA Number Verification \(client.endpoint.apiRoot)", rules: "camara-oidc",
                verification: verification, hashed: options.hashed)
        case .vonageNumberVerification:
            let client = try SimSwapCommand.vonageNetworkClient(for: name.rawValue, configuration, context)
            let verification = CAMARANumberVerification(
                client: client, api: .vonage, redirectURI: try configuration.requireVonageRedirectURI())
            return try NumberVerificationProvider(
                name: "Vonage Number Verification \(client.endpoint.apiRoot)", rules: "vonage-nv-oidc",
                verification: verification, hashed: options.hashed)
        }
    }

    /// How calls with the `[vonage]` profile authenticate: its application's JWT (signed with the
    /// private key read from its file), else Basic key:secret.
    static func vonageAuthentication(_ profile: VonageProfile, _ context: CommandContext) throws -> VonageAuthentication
    {
        for warning in profile.warnings { context.logger.warning("\(warning)") }
        switch profile.credentials {
        case .application(let id, let pem):
            let key = try JWSKey.rsa(pem: pem, what: "vonage.private_key")
            return .applicationJWT(applicationID: id, sign: { key.sign($0) ?? [] })
        case .apiKey(let key, let secret):
            return .basic(apiKey: key, apiSecret: secret)
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
