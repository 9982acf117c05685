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
        profile.warnings.forEach(warn)
        let authentication: VonageAuthentication
        switch profile.credentials {
        case .application(let id, let pem):
            let key = try JWSKey.rsa(pem: pem, what: "vonage.private_key")
            authentication = .applicationJWT(applicationID: id, sign: { key.sign($0) ?? [] })
        case .apiKey(let key, let secret):
            authentication = .basic(apiKey: key, apiSecret: secret)
        }
        let account = VonageVerifyAccount(
            baseURL: profile.apiBase, brand: profile.brand, authentication: authentication)
        return VonageVerifyClient(
            account: account, fallbacks: fallbacks, http: HTTPClient(route: .defaultNetwork),
            caFile: try checkedCAFile(configuration), timeout: try configuration.timeout)
    }

    /// The `[camara]` profile's client: its key read (mode 0600 or stricter), the CA bundle checked.
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
