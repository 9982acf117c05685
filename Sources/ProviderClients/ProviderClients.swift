import CAMARA
import CellpathCLI
import CellpathCore
import CellpathCrypto
import CellularHTTP
import Configuration
import SystemSupport
import Workflow

/// The providers' API clients made from their configured profiles (`[twilio]`, `[vonage]`,
/// `[camara]`), with the CA bundle checked: what `verify`, `sim-swap` and `serve` call.
package enum ProviderClients {
    /// Twilio Verify (SNA) with the `[twilio]` profile.
    package static func twilio(_ configuration: EffectiveConfiguration) throws -> TwilioVerifyClient {
        let profile = try configuration.requireTwilioProfile()
        let account = TwilioVerifyAccount(
            baseURL: profile.apiBase, accountSID: profile.accountSID, authToken: profile.authToken,
            serviceSID: profile.serviceSID)
        return TwilioVerifyClient(
            account: account, http: HTTPClient(route: .defaultNetwork), caFile: try checkedCAFile(configuration),
            timeout: try configuration.timeout)
    }

    /// Vonage Verify (silent_auth first, then `fallbacks`) with the `[vonage]` profile, its
    /// private key read as `caller` may read it; the profile's warnings go to `warn`.
    package static func vonage(
        _ configuration: EffectiveConfiguration, fallbacks: [VonageChannel], caller: FileIdentity?,
        warn: (String) -> Void
    ) throws -> VonageVerifyClient {
        let profile = try configuration.requireVonageProfile(as: caller)
        let account = VonageVerifyAccount(
            baseURL: profile.apiBase, brand: profile.brand,
            authentication: try vonageAuthentication(profile, warn: warn))
        return VonageVerifyClient(
            account: account, fallbacks: fallbacks, http: HTTPClient(route: .defaultNetwork),
            caFile: try checkedCAFile(configuration), timeout: try configuration.timeout)
    }

    /// How calls with the `[vonage]` profile authenticate: its application's JWT (signed with the
    /// private key read from its file), else Basic key:secret. The profile's warnings go to `warn`.
    static func vonageAuthentication(_ profile: VonageProfile, warn: (String) -> Void) throws -> VonageAuthentication {
        profile.warnings.forEach(warn)
        switch profile.credentials {
        case .application(let id, let pem):
            let key = try JWSKey.rsa(pem: pem, what: "vonage.private_key")
            return .applicationJWT(applicationID: id, sign: { key.sign($0) ?? [] })
        case .apiKey(let key, let secret):
            return .basic(apiKey: key, apiSecret: secret)
        }
    }

    /// The client of Vonage's network APIs (Number Verification, SIM Swap) for `--provider
    /// provider`: the `[vonage]` application (its JWT authenticates the token and backchannel
    /// calls) and the endpoints of `vonage.network_api_base` and `vonage.oidc_base`. An API key
    /// instead of an application is a `.configuration` error.
    package static func vonageNetwork(
        for provider: String, _ configuration: EffectiveConfiguration, caller: FileIdentity?,
        warn: (String) -> Void
    ) throws -> CAMARAClient {
        let profile = try configuration.requireVonageProfile(as: caller)
        guard case .application(let applicationID, _) = profile.credentials else {
            throw CellpathError(
                .configuration, "--provider \(provider) needs a Vonage application, not an API key",
                hint: "set [vonage] application_id and private_key, or CELLPATH_VONAGE_APPLICATION_ID "
                    + "and CELLPATH_VONAGE_PRIVATE_KEY")
        }
        let network = try configuration.requireVonageNetworkProfile(for: provider)
        let endpoint = CAMARAEndpoint(
            apiRoot: network.apiBase, issuer: network.oidcBase, clientID: applicationID,
            authentication: .vonageApplication(try vonageAuthentication(profile, warn: warn)),
            caFile: try checkedCAFile(configuration), timeout: try configuration.timeout,
            metadata: ProviderMetadata(
                issuer: network.oidcBase, authorizationEndpoint: network.oidcBase + "/oauth2/auth",
                tokenEndpoint: network.apiBase + "/oauth2/token",
                backchannelAuthenticationEndpoint: network.apiBase + "/oauth2/bc-authorize"))
        return CAMARAClient(endpoint: endpoint, http: HTTPClient(route: .defaultNetwork))
    }

    /// The `[camara]` profile's client: its key read (mode 0600 or stricter), the CA bundle checked.
    /// Also what a command with a CAMARA device leg starts from.
    package static func camara(_ configuration: EffectiveConfiguration) throws -> CAMARAClient {
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
        return CAMARAClient(
            endpoint: CAMARAEndpoint(
                apiRoot: settings.apiRoot, issuer: settings.issuer, clientID: settings.clientID,
                authentication: .privateKeyJWT(key, keyID: nil), caFile: try checkedCAFile(configuration),
                timeout: try configuration.timeout),
            http: HTTPClient(route: .defaultNetwork))
    }

    /// The configured CA bundle, checked to be one; nil for the system's.
    package static func checkedCAFile(_ configuration: EffectiveConfiguration) throws -> String? {
        let caFile = try configuration.caFile
        if let caFile { try FetchCommand.checkCABundle(caFile, origin: configuration.origin(of: "http.cacert")) }
        return caFile
    }
}
