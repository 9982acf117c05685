import CellpathCore
import Glibc
import SystemSupport

/// Loads cellpath's effective configuration from, lowest to highest precedence: built-in
/// defaults, the system file, the user file, `CELLPATH_*` environment variables, then the
/// command-line flags the CLI passes in. Everything is injected, so tests need no real files.
/// See docs/configuration.md for the schema.
public struct ConfigurationLoader: Sendable {
    /// The environment variable that moves the system file (tests and packaging use it).
    public static let systemConfigEnvironment = "CELLPATH_SYSTEM_CONFIG"
    /// The system file when `CELLPATH_SYSTEM_CONFIG` is not set.
    public static let defaultSystemPath = "/etc/cellpath/cellpath.conf"

    /// Environment variables (the process environment in production).
    public var environment: [String: String]
    /// Flag values keyed by `ConfigurationFlag` raw values (`region`, `tru-json`, …).
    public var flags: [String: String]
    /// The system file to read (it need not exist).
    public var systemPath: String
    /// The user file to read (it need not exist); nil when there is no home directory.
    public var userPath: String?
    /// Whose rights a tru.json named by `--tru-json` is read with (the caller of a privileged
    /// process); nil: this process's.
    public var caller: FileIdentity?

    /// Paths left nil are derived from `environment` (see `systemPath(environment:)`, `userPath(environment:)`).
    public init(
        environment: [String: String], flags: [String: String] = [:],
        systemPath: String? = nil, userPath: String? = nil, caller: FileIdentity? = nil
    ) {
        self.environment = environment
        self.flags = flags
        self.caller = caller
        self.systemPath = systemPath ?? Self.systemPath(environment: environment)
        self.userPath = userPath ?? Self.userPath(environment: environment)
    }

    /// Every environment variable the configuration reads, with what it does ("sets
    /// general.region"), for the man page.
    public static var environmentVariables: [(name: String, meaning: String)] {
        Setting.all.compactMap { setting in setting.environment.map { ($0, "sets \(setting.name)") } }
            + [
                (Setting.serverURLEnvironment, "sets the active profile's server URL (server.<profile>)"),
                (systemConfigEnvironment, "the system configuration file to read instead of \(defaultSystemPath)")
            ]
    }

    /// `$CELLPATH_SYSTEM_CONFIG`, else `/etc/cellpath/cellpath.conf`.
    public static func systemPath(environment: [String: String]) -> String {
        if let path = environment[systemConfigEnvironment], !path.isEmpty { return path }
        return defaultSystemPath
    }

    /// `$XDG_CONFIG_HOME/cellpath/cellpath.conf` (when absolute, as the XDG spec requires),
    /// else `$HOME/.config/cellpath/cellpath.conf`, else nil.
    public static func userPath(environment: [String: String]) -> String? {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return xdg + "/cellpath/cellpath.conf"
        }
        if let home = environment["HOME"], !home.isEmpty {
            return home + "/.config/cellpath/cellpath.conf"
        }
        return nil
    }

    /// Reads every source and returns the effective configuration with its warnings.
    /// Throws only `.usage`, for an invalid flag value or a flag that would carry a secret: what
    /// is on the command line is checked at once. A value from a file, a variable or a tru.json
    /// that is not valid (or a file that cannot be parsed) makes only the settings it concerns
    /// unusable: reading one of those throws `.configuration` (`.permission` for an unreadable
    /// tru.json), so a command fails only when it needs one. Runs on any thread; it reads files
    /// synchronously.
    public func load() throws(CellpathError) -> EffectiveConfiguration {
        var resolver = ConfigurationResolver(home: environment["HOME"], caller: caller)
        resolver.readFile(systemPath, role: .system, layer: .system)
        if let userPath { resolver.readFile(userPath, role: .user, layer: .user) }
        resolver.addEnvironment(environment)
        try resolver.addFlags(flags)
        return resolver.resolve()
    }
}
