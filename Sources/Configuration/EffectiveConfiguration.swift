import CellpathCore

/// cellpath's configuration after all sources were merged, with typed accessors, the
/// `config show` entries (secrets masked) and the warnings found while loading.
///
/// Each setting stands alone: reading one whose value is not valid (or comes from a file or
/// tru.json that cannot be read) throws its `.configuration` error (`.permission` for an
/// unreadable tru.json), and only that one, so a command fails only when it needs it.
public struct EffectiveConfiguration: Sendable {
    /// Default region for phone numbers (ISO 3166 alpha-2, upper case), if configured.
    public var region: String? { get throws(CellpathError) { try regionSetting.get() } }
    /// The active server profile, `development` by default.
    public var profile: String { get throws(CellpathError) { try profileSetting.get() } }
    /// The tru.ID data residency (`eu` by default); it selects the tru.ID API host.
    public var dataResidency: DataResidency { get throws(CellpathError) { try dataResidencySetting.get() } }
    /// The tru.ID API base URL: `truid.api_base` when set (the simulator sets it), else the
    /// data residency's `https://{eu,in,us}.api.tru.id`.
    public var apiBaseURL: String {
        get throws(CellpathError) {
            if let base = try apiBaseSetting.get() { return base }
            return try dataResidency.apiBaseURL
        }
    }
    /// tru.ID client credentials, when both id and secret are configured.
    public var credentials: TruIDCredentials? { get throws(CellpathError) { try credentialsSetting.get() } }
    /// The tru.json file the credentials may come from, if one is configured.
    public var truJSONPath: String? { get throws(CellpathError) { try truJSONPathSetting.get() } }
    /// Prefix of the simulator's network namespaces (`cp-` by default).
    public var simPrefix: String { get throws(CellpathError) { try simPrefixSetting.get() } }
    /// A CA bundle for HTTPS to the backend, instead of the system's, if configured.
    public var caFile: String? { get throws(CellpathError) { try caFileSetting.get() } }
    /// Deadline for one HTTP hop (5 s by default).
    public var hopTimeout: Duration { get throws(CellpathError) { try hopTimeoutSetting.get() } }
    /// Deadline for a whole operation's HTTP exchange (30 s by default).
    public var timeout: Duration { get throws(CellpathError) { try timeoutSetting.get() } }
    /// The access point name of a bearer that cellpath brings up without `--apn`; nil: the
    /// modem's provisioned context.
    public var apn: String? { get throws(CellpathError) { try apnSetting.get() } }
    /// The address families a bearer that cellpath brings up asks for without `--ip-type`
    /// (ipv4v6 by default; the network grants what it allows).
    public var ipType: BearerIPType { get throws(CellpathError) { try ipTypeSetting.get() } }
    /// The `[camara]` profile, when all four of its settings are configured.
    public var camara: CAMARASettings? { get throws(CellpathError) { try camaraSetting.get() } }
    /// Every setting with its value (masked when secret) and origin, or its error, in display order.
    public let entries: [ConfigurationEntry]
    /// Problems that did not stop loading: unknown keys, insecure file modes, overrides.
    public let warnings: [String]
    /// The files that were looked for and what became of each.
    public let files: [ConfigurationFile]

    private let regionSetting: Result<String?, CellpathError>
    private let profileSetting: Result<String, CellpathError>
    private let dataResidencySetting: Result<DataResidency, CellpathError>
    private let apiBaseSetting: Result<String?, CellpathError>
    private let credentialsSetting: Result<TruIDCredentials?, CellpathError>
    private let truJSONPathSetting: Result<String?, CellpathError>
    private let simPrefixSetting: Result<String, CellpathError>
    private let caFileSetting: Result<String?, CellpathError>
    private let hopTimeoutSetting: Result<Duration, CellpathError>
    private let timeoutSetting: Result<Duration, CellpathError>
    private let apnSetting: Result<String?, CellpathError>
    private let ipTypeSetting: Result<BearerIPType, CellpathError>
    private let camaraSetting: Result<CAMARASettings?, CellpathError>
    /// Server base URL per profile (the active profile's after env/flag overrides).
    private let serverURLs: [String: Result<String?, CellpathError>]
    /// The providers' settings (`twilio.account_sid`, …) by name.
    let providerValues: [String: Result<String?, CellpathError>]

    init(
        region: Result<String?, CellpathError>, profile: Result<String, CellpathError>,
        dataResidency: Result<DataResidency, CellpathError>, apiBase: Result<String?, CellpathError>,
        credentials: Result<TruIDCredentials?, CellpathError>,
        truJSONPath: Result<String?, CellpathError>, simPrefix: Result<String, CellpathError>,
        caFile: Result<String?, CellpathError>, hopTimeout: Result<Duration, CellpathError>,
        timeout: Result<Duration, CellpathError>, apn: Result<String?, CellpathError>,
        ipType: Result<BearerIPType, CellpathError>, camara: Result<CAMARASettings?, CellpathError>,
        serverURLs: [String: Result<String?, CellpathError>], providerValues: [String: Result<String?, CellpathError>],
        entries: [ConfigurationEntry], warnings: [String], files: [ConfigurationFile]
    ) {
        regionSetting = region
        profileSetting = profile
        dataResidencySetting = dataResidency
        apiBaseSetting = apiBase
        credentialsSetting = credentials
        truJSONPathSetting = truJSONPath
        simPrefixSetting = simPrefix
        caFileSetting = caFile
        hopTimeoutSetting = hopTimeout
        timeoutSetting = timeout
        apnSetting = apn
        ipTypeSetting = ipType
        camaraSetting = camara
        self.serverURLs = serverURLs
        self.providerValues = providerValues
        self.entries = entries
        self.warnings = warnings
        self.files = files
    }

    /// Names of the profiles that have a server URL (usable or not), sorted.
    public var profiles: [String] { serverURLs.keys.sorted() }

    /// The active profile's server base URL (no trailing '/'), if configured.
    public var serverBaseURL: String? { get throws(CellpathError) { try serverBaseURL(for: try profile) } }

    /// The server base URL of `profile` (no trailing '/'), if configured.
    public func serverBaseURL(for profile: String) throws(CellpathError) -> String? {
        try serverURLs[profile]?.get() ?? nil
    }

    /// The active profile's server base URL, or a `.configuration` error saying how to set it.
    public func requireServerBaseURL() throws(CellpathError) -> String {
        let profile = try profile
        guard let url = try serverBaseURL(for: profile) else {
            throw CellpathError(
                .configuration, "no server URL for profile '\(profile)'",
                hint: "Set [server] \(profile)=https://… in the configuration file, "
                    + "or CELLPATH_SERVER_URL, or --server-url.")
        }
        return url
    }

    /// The tru.ID credentials, or a `.configuration` error saying how to provide them.
    public func requireCredentials() throws(CellpathError) -> TruIDCredentials {
        guard let credentials = try credentials else {
            throw CellpathError(
                .configuration, "no tru.ID credentials configured",
                hint: "Use --tru-json PATH (the tru.json of 'tru projects:create'), "
                    + "[truid] tru_json in the configuration file, "
                    + "or CELLPATH_CLIENT_ID and CELLPATH_CLIENT_SECRET.")
        }
        return credentials
    }

    /// The `[camara]` profile, or a `.configuration` error saying how to provide it.
    public func requireCAMARA() throws(CellpathError) -> CAMARASettings {
        guard let camara = try camara else {
            throw CellpathError(
                .configuration, "no CAMARA operator configured",
                hint: "Set [camara] api_root, issuer, client_id and key_file in the configuration file, "
                    + "or CELLPATH_CAMARA_API_ROOT, _ISSUER, _CLIENT_ID and _KEY_FILE.")
        }
        return camara
    }

    /// The origin of a setting's effective value (`general.region`, `server.production`, …).
    public func origin(of key: String) -> ConfigurationOrigin? {
        entries.first { $0.key == key }?.origin
    }
}
