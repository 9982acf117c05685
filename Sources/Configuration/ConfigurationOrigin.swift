/// Where an effective configuration value came from, for `config show` and error messages.
public enum ConfigurationOrigin: Sendable, Equatable, CustomStringConvertible {
    /// cellpath's built-in default.
    case builtIn
    /// A key of an INI configuration file.
    case file(path: String, group: String, key: String)
    /// An environment variable.
    case environment(String)
    /// A command-line flag (its long name without `--`).
    case flag(String)
    /// A field of a tru CLI `tru.json` project file.
    case truJSON(path: String, field: String)
    /// A configuration file that is not an INI file, so any of its keys.
    case brokenFile(path: String)

    /// E.g. `default`, `/etc/cellpath/cellpath.conf [general] region`, `environment CELLPATH_REGION`,
    /// `flag --region`, `/srv/app/tru.json credentials[0].client_id`.
    public var description: String {
        switch self {
        case .builtIn: "default"
        case let .file(path, group, key): "\(path) [\(group)] \(key)"
        case let .environment(name): "environment \(name)"
        case let .flag(name): "flag --\(name)"
        case let .truJSON(path, field): "\(path) \(field)"
        case let .brokenFile(path): path
        }
    }

    /// Whether the value was read from a tru.json file.
    var isTruJSON: Bool {
        if case .truJSON = self { return true }
        return false
    }

    /// The file or variable as a whole, to tell whether two values come from one place.
    var container: String {
        switch self {
        case .builtIn: "default"
        case let .file(path, _, _), let .truJSON(path, _), let .brokenFile(path): path
        case .environment: "environment"
        case .flag: "command line"
        }
    }
}

/// One line of `config show`: a setting, its effective value (masked when secret) and origin,
/// or why it has no usable value.
public struct ConfigurationEntry: Sendable, Equatable, Encodable {
    /// `group.key`, e.g. `general.region`, `server.production`, `truid.client_secret`.
    public var key: String
    /// The effective value, `[redacted]` for a secret, nil when the setting is not set.
    public var value: String?
    /// Whether the real value is a secret (and `value` therefore masked).
    public var isSecret: Bool
    /// Where the value came from (or the source that broke it); nil when the setting is not set.
    public var origin: ConfigurationOrigin?
    /// Why the setting has no usable value (`value` is then nil): commands that need it fail.
    public var error: String?

    public init(key: String, value: String?, isSecret: Bool, origin: ConfigurationOrigin?, error: String? = nil) {
        self.key = key
        self.value = value
        self.isSecret = isSecret
        self.origin = origin
        self.error = error
    }

    private enum CodingKeys: String, CodingKey { case key, value, secret, source, error }

    /// JSON: `{"key": …, "value": … | null, "secret": bool, "source": "…" | null, "error": "…" | null}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key, forKey: .key)
        try container.encode(value, forKey: .value)
        try container.encode(isSecret, forKey: .secret)
        try container.encode(origin?.description, forKey: .source)
        try container.encode(error, forKey: .error)
    }
}

/// A configuration file that was looked for, and what became of it.
public struct ConfigurationFile: Sendable, Equatable {
    /// What the file is for.
    public enum Role: String, Sendable { case system, user, truJSON = "tru.json" }
    /// What reading it gave.
    public enum Status: Sendable, Equatable {
        case loaded
        case missing
        /// It exists but could not be read; the reason.
        case unreadable(String)
        /// It was read but is not what it should be (not an INI file, not a tru.json); the reason.
        case invalid(String)
    }

    public var path: String
    public var role: Role
    public var status: Status

    public init(path: String, role: Role, status: Status) {
        self.path = path
        self.role = role
        self.status = status
    }
}
