import CellpathCore

/// cellpath's configuration after all sources were merged, with typed accessors, the
/// `config show` entries (secrets masked) and the warnings found while loading.
public struct EffectiveConfiguration: Sendable {
    /// Default region for phone numbers (ISO 3166 alpha-2, upper case), if configured.
    public let region: String?
    /// The active server profile, `development` by default.
    public let profile: String
    /// The tru.ID data residency (`eu` by default); it selects the tru.ID API host.
    public let dataResidency: DataResidency
    /// tru.ID client credentials, when both id and secret are configured.
    public let credentials: TruIDCredentials?
    /// The tru.json file the credentials may come from, if one is configured.
    public let truJSONPath: String?
    /// Prefix of the simulator's network namespaces (`cp-` by default).
    public let simPrefix: String
    /// A CA bundle for HTTPS to the backend, instead of the system's, if configured.
    public let caFile: String?
    /// Deadline for one HTTP hop (5 s by default).
    public let hopTimeout: Duration
    /// Deadline for a whole operation's HTTP exchange (30 s by default).
    public let timeout: Duration
    /// Every setting with its value (masked when secret) and origin, in display order.
    public let entries: [ConfigurationEntry]
    /// Problems that did not stop loading: unknown keys, insecure file modes, overrides.
    public let warnings: [String]
    /// The files that were looked for and what became of each.
    public let files: [ConfigurationFile]
    /// Server base URL per profile (the active profile's after env/flag overrides).
    let serverURLs: [String: String]

    /// Names of the profiles that have a server URL, sorted.
    public var profiles: [String] { serverURLs.keys.sorted() }

    /// The active profile's server base URL (no trailing '/'), if configured.
    public var serverBaseURL: String? { serverURLs[profile] }

    /// The server base URL of `profile` (no trailing '/'), if configured.
    public func serverBaseURL(for profile: String) -> String? { serverURLs[profile] }

    /// The active profile's server base URL, or a `.configuration` error saying how to set it.
    public func requireServerBaseURL() throws(CellpathError) -> String {
        guard let url = serverBaseURL else {
            throw CellpathError(.configuration, "no server URL for profile '\(profile)'",
                                hint: "Set [server] \(profile)=https://… in the configuration file, "
                                    + "or CELLPATH_SERVER_URL, or --server-url.")
        }
        return url
    }

    /// The tru.ID credentials, or a `.configuration` error saying how to provide them.
    public func requireCredentials() throws(CellpathError) -> TruIDCredentials {
        guard let credentials else {
            throw CellpathError(.configuration, "no tru.ID credentials configured",
                                hint: "Use --tru-json PATH (the tru.json of 'tru projects:create'), "
                                    + "[truid] tru_json in the configuration file, "
                                    + "or CELLPATH_CLIENT_ID and CELLPATH_CLIENT_SECRET.")
        }
        return credentials
    }

    /// The origin of a setting's effective value (`general.region`, `server.production`, …).
    public func origin(of key: String) -> ConfigurationOrigin? {
        entries.first { $0.key == key }?.origin
    }
}
