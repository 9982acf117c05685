import CellpathCore

/// The settings of the providers' profiles: one group per provider (`[twilio]`, `[vonage]`,
/// `[camara]`), each key with its `CELLPATH_<PROVIDER>_<KEY>` variable and no flag (no
/// credential is ever given on the command line).
extension Setting {
    static func provider(
        _ group: String, _ key: String, _ kind: ValueKind, secret: Bool = false, default value: String? = nil
    )
        -> Setting
    {
        Setting(
            group: group, key: key, environment: "CELLPATH_\(group.uppercased())_\(key.uppercased())", kind: kind,
            defaultValue: value, isSecret: secret)
    }

    static let twilioAPIBase = provider("twilio", "api_base", .url, default: "https://verify.twilio.com")
    static let twilioAccountSID = provider("twilio", "account_sid", .clientID)
    static let twilioAuthToken = provider("twilio", "auth_token", .secret, secret: true)
    static let twilioServiceSID = provider("twilio", "service_sid", .clientID)

    static let vonageAPIBase = provider("vonage", "api_base", .url, default: "https://api.nexmo.com")
    static let vonageApplicationID = provider("vonage", "application_id", .clientID)
    static let vonagePrivateKey = provider("vonage", "private_key", .path)
    static let vonageAPIKey = provider("vonage", "api_key", .clientID)
    static let vonageAPISecret = provider("vonage", "api_secret", .secret, secret: true)
    static let vonageBrand = provider("vonage", "brand", .clientID, default: "cellpath")
    /// Vonage's Number Verification (`vonage-nv`): its API and token endpoint, its OpenID
    /// provider's authorize endpoint, and the application's redirect URI.
    static let vonageNetworkAPIBase = provider(
        "vonage", "network_api_base", .url, default: "https://api-eu.vonage.com")
    static let vonageOIDCBase = provider("vonage", "oidc_base", .url, default: "https://oidc.idp.vonage.com")
    static let vonageRedirectURI = provider("vonage", "redirect_uri", .url)

    /// The `[camara]` profile (`CAMARASettings`), all four or none.
    static let camaraAPIRoot = provider("camara", "api_root", .url)
    static let camaraIssuer = provider("camara", "issuer", .url)
    static let camaraClientID = provider("camara", "client_id", .clientID)
    static let camaraKeyFile = provider("camara", "key_file", .path)
    static let camara = [camaraAPIRoot, camaraIssuer, camaraClientID, camaraKeyFile]
    /// The client's redirect URI, for Number Verification (`verify --provider camara`) only.
    static let camaraRedirectURI = provider("camara", "redirect_uri", .url)

    /// `[serve] provider`: the provider whose API `serve`'s dev-server routes call.
    static let serveProvider = provider("serve", "provider", .servedProvider, default: "truid")

    /// Every provider setting, in `config show` order.
    static let providers: [Setting] = [
        twilioAPIBase, twilioAccountSID, twilioAuthToken, twilioServiceSID,
        vonageAPIBase, vonageApplicationID, vonagePrivateKey, vonageAPIKey, vonageAPISecret, vonageBrand,
        vonageNetworkAPIBase, vonageOIDCBase, vonageRedirectURI, camaraRedirectURI, serveProvider
    ]
    static let providerGroups = ["twilio", "vonage", "serve"]
}

extension EffectiveConfiguration {
    /// The provider `serve` answers with (`truid`, `twilio`, `vonage` or `camara`).
    public var servedProvider: String { get throws(CellpathError) { try value(of: .serveProvider) ?? "truid" } }

    /// The value of a provider setting, or the configuration error that makes it unusable.
    func value(of setting: Setting) throws(CellpathError) -> String? {
        try providerValues[setting.name]?.get() ?? nil
    }

    /// The value of a provider setting, or a `.configuration` error naming its key and variable.
    func require(_ setting: Setting, for provider: String) throws(CellpathError) -> String {
        guard let value = try value(of: setting) else {
            throw CellpathError(
                .configuration, "no \(setting.name) configured for --provider \(provider)",
                hint: "set [\(setting.group)] \(setting.key) in the configuration file"
                    + (setting.isSecret ? " (mode 600)" : "") + ", or \(setting.environment ?? "")")
        }
        return value
    }
}
