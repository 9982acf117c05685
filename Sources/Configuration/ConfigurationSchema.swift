import CellpathCore

/// The command-line flags that carry configuration values; the CLI passes them to
/// `ConfigurationLoader` keyed by these raw values (the long option name without `--`).
/// No flag carries a secret: tru.ID credentials come from files or the environment only.
public enum ConfigurationFlag: String, Sendable, CaseIterable {
    case region
    case profile
    case serverURL = "server-url"
    case truJSON = "tru-json"
    case dataResidency = "data-residency"
    case apiBase = "api-base"
    case caFile = "cacert"
    /// The same option as the `sim` commands' `--prefix`.
    case simPrefix = "prefix"
    case hopTimeout = "hop-timeout"
    case timeout
    /// The same option as `bearer up`'s and `fetch`'s `--apn`.
    case apn
}

/// The shape a configuration value must have; validation also normalises it.
enum ValueKind {
    case region, profile, url, path, dataResidency, simPrefix, seconds, clientID, secret, accessPointName, ipType
    case servedProvider

    /// The providers `serve` can answer with.
    static let servedProviders = ["truid", "twilio", "vonage", "camara"]

    /// Returns the normalised value, or a problem sentence (which never repeats the value).
    /// Relative paths are resolved against `baseDirectory` (a config file's directory).
    func validate(_ raw: String, baseDirectory: String?, home: String?) -> Result<String, Problem> {
        if raw.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return .failure(Problem("contains control characters"))
        }
        let value = String(raw.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        if value.isEmpty { return .failure(Problem("is empty")) }
        switch self {
        case .region:
            guard value.count == 2, value.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                return .failure(Problem("expected a two-letter ISO 3166 region code such as GB"))
            }
            return .success(value.uppercased())
        case .profile:
            guard value.count <= 32, value.allSatisfy(Self.isNameCharacter) else {
                return .failure(Problem("expected a profile name of at most 32 letters, digits, '-' or '_'"))
            }
            return .success(value)
        case .url:
            return Self.validateBaseURL(value)
        case .path:
            return .success(Self.resolve(path: value, baseDirectory: baseDirectory, home: home))
        case .dataResidency:
            let lower = value.lowercased()
            guard DataResidency(rawValue: lower) != nil else {
                return .failure(Problem("expected one of eu, in, us"))
            }
            return .success(lower)
        case .simPrefix:
            guard value.count <= 8, value.allSatisfy(Self.isNameCharacter),
                value.first!.isLetter || value.first!.isNumber
            else {
                return .failure(
                    Problem(
                        "expected 1 to 8 letters, digits, '-' or '_', starting with a letter or digit (it prefixes namespace names)"
                    ))
            }
            return .success(value)
        case .seconds:
            guard let seconds = Double(value), seconds.isFinite, seconds > 0, seconds <= 3600 else {
                return .failure(Problem("expected a number of seconds greater than 0 and at most 3600"))
            }
            return .success(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds))
        case .clientID:
            guard !value.contains(":"), !value.contains(where: \.isWhitespace) else {
                return .failure(Problem("a client id contains no ':' and no spaces"))
            }
            return .success(value)
        case .secret:
            guard !value.contains(where: \.isWhitespace) else {
                return .failure(Problem("a client secret contains no spaces"))
            }
            return .success(value)
        case .accessPointName:
            // 3GPP TS 23.003 labels (letters, digits, '-') joined by '.'; '_' as some operators use it.
            guard value.count <= 100, value.first != ".", value.last != ".",
                value.allSatisfy({ Self.isNameCharacter($0) || $0 == "." })
            else {
                return .failure(
                    Problem(
                        "expected an access point name of at most 100 letters, digits, '-', '_' or '.' such as internet"
                    ))
            }
            return .success(value)
        case .ipType:
            let lower = value.lowercased()
            guard BearerIPType(rawValue: lower) != nil else {
                return .failure(Problem("expected one of ipv4, ipv6, ipv4v6"))
            }
            return .success(lower)
        case .servedProvider:
            let lower = value.lowercased()
            guard Self.servedProviders.contains(lower) else {
                return .failure(Problem("expected one of " + Self.servedProviders.joined(separator: ", ")))
            }
            return .success(lower)
        }
    }

    private static func isNameCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_")
    }

    /// An http(s) URL with a host, no credentials, query or fragment; the trailing '/' is dropped.
    private static func validateBaseURL(_ value: String) -> Result<String, Problem> {
        let expected = "expected an http:// or https:// base URL such as https://example.com/api"
        guard let url = URIParts(value), ["http", "https"].contains(url.scheme.lowercased()),
            let host = url.host, !host.isEmpty, !value.contains(where: \.isWhitespace)
        else { return .failure(Problem(expected)) }
        if url.hasUserInfo {
            return .failure(Problem("a base URL must not hold a user name or password"))
        }
        if url.hasQuery || url.hasFragment {
            return .failure(Problem("a base URL has no query ('?') or fragment ('#')"))
        }
        var normalised = value
        while normalised.hasSuffix("/") { normalised.removeLast() }
        return .success(normalised)
    }

    /// Expands a leading `~/` and makes a relative path relative to `baseDirectory`.
    private static func resolve(path: String, baseDirectory: String?, home: String?) -> String {
        if path.hasPrefix("~/"), let home, !home.isEmpty {
            return home + path.dropFirst(1)
        }
        if !path.hasPrefix("/"), let baseDirectory {
            return baseDirectory + "/" + path
        }
        return path
    }
}

/// Why a value is invalid, in words that never repeat the value itself.
struct Problem: Error {
    var text: String
    init(_ text: String) { self.text = text }
}

/// One setting of the schema: its INI group and key, its environment variable and flag.
struct Setting {
    var group: String
    var key: String
    var environment: String?
    var flag: ConfigurationFlag?
    var kind: ValueKind
    var defaultValue: String?
    var isSecret = false

    /// The setting's name in `config show` and in `ConfigurationEntry.key`, e.g. `general.region`.
    var name: String { "\(group).\(key)" }

    static let region = Setting(
        group: "general", key: "region", environment: "CELLPATH_REGION",
        flag: .region, kind: .region)
    static let profile = Setting(
        group: "general", key: "profile", environment: "CELLPATH_PROFILE",
        flag: .profile, kind: .profile, defaultValue: "development")
    static let truJSON = Setting(
        group: "truid", key: "tru_json", environment: "CELLPATH_TRU_JSON",
        flag: .truJSON, kind: .path)
    static let dataResidency = Setting(
        group: "truid", key: "data_residency",
        environment: "CELLPATH_DATA_RESIDENCY", flag: .dataResidency,
        kind: .dataResidency, defaultValue: "eu")
    static let apiBase = Setting(
        group: "truid", key: "api_base", environment: "CELLPATH_API_BASE",
        flag: .apiBase, kind: .url)
    static let clientID = Setting(
        group: "truid", key: "client_id", environment: "CELLPATH_CLIENT_ID",
        kind: .clientID)
    static let clientSecret = Setting(
        group: "truid", key: "client_secret",
        environment: "CELLPATH_CLIENT_SECRET", kind: .secret, isSecret: true)
    static let simPrefix = Setting(
        group: "sim", key: "prefix", environment: "CELLPATH_SIM_PREFIX",
        flag: .simPrefix, kind: .simPrefix, defaultValue: "cp-")
    static let caFile = Setting(
        group: "http", key: "cacert", environment: "CELLPATH_CA_FILE",
        flag: .caFile, kind: .path)
    static let hopTimeout = Setting(
        group: "http", key: "hop_timeout", environment: "CELLPATH_HOP_TIMEOUT",
        flag: .hopTimeout, kind: .seconds, defaultValue: "5")
    static let timeout = Setting(
        group: "http", key: "timeout", environment: "CELLPATH_TIMEOUT",
        flag: .timeout, kind: .seconds, defaultValue: "30")
    static let apn = Setting(
        group: "modem", key: "apn", environment: "CELLPATH_APN", flag: .apn, kind: .accessPointName)
    /// No flag: `bearer up --ip-type` takes the same values, `fetch --ip-type` others (any).
    static let ipType = Setting(
        group: "modem", key: "ip_type", environment: "CELLPATH_IP_TYPE", kind: .ipType,
        defaultValue: BearerIPType.ipv4v6.rawValue)

    /// Every fixed setting, in `config show` order (server profiles go after `general`).
    static let all: [Setting] =
        [
            region, profile, truJSON, dataResidency, apiBase, clientID, clientSecret,
            simPrefix, caFile, hopTimeout, timeout, apn, ipType
        ] + providers + camara

    /// The group whose keys are profile names and whose values are server base URLs.
    static let serverGroup = "server"
    /// The environment variable and flag that override the active profile's server URL.
    static let serverURLEnvironment = "CELLPATH_SERVER_URL"

    /// Every group a configuration file may hold.
    static let groups: [String] =
        ["general", serverGroup, "truid", "sim", "http", "modem"] + providerGroups + ["camara"]

    /// CELLPATH_* variables that are not settings but are known, so never warned about.
    static let otherEnvironment: [String] = [ConfigurationLoader.systemConfigEnvironment]

    /// Every environment variable that configuration reads.
    static var environmentNames: [String] {
        all.compactMap(\.environment) + [serverURLEnvironment] + otherEnvironment
    }
}
