import CellpathCore
import Configuration
import Glibc
import SystemSupport
import TestSupport

/// A private temporary directory with the system file, the user file and tru.json files of one
/// test; removed (with everything in it) on `deinit`.
final class Fixture {
    let directory: String
    var systemPath: String { directory + "/system.conf" }
    var userPath: String { directory + "/user/cellpath.conf" }

    init() {
        do { directory = try TemporaryDirectory.make("cellpath-config") } catch { preconditionFailure("\(error)") }
        mkdir(directory + "/user", 0o700)
    }

    deinit { FileSystem.removeTree(directory) }

    /// Writes `text` to `path` (relative to the directory unless absolute) with `mode`; returns the path.
    @discardableResult
    func write(_ path: String, _ text: String, mode: mode_t = 0o600) -> String {
        write(path, bytes: Array(text.utf8), mode: mode)
    }

    /// Writes `bytes` (which need not be UTF-8) to `path` as `write(_:_:mode:)` does.
    @discardableResult
    func write(_ path: String, bytes: [UInt8], mode: mode_t = 0o600) -> String {
        let full = path.hasPrefix("/") ? path : directory + "/" + path
        let fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0, "cannot create \(full)")
        precondition(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count)
        close(fd)
        chmod(full, mode)
        return full
    }

    /// Writes the system file.
    func system(_ text: String, mode: mode_t = 0o644) { write(systemPath, text, mode: mode) }
    /// Writes the user file.
    func user(_ text: String, mode: mode_t = 0o600) { write(userPath, text, mode: mode) }

    /// Writes a tru.json as `tru projects:create` does; returns its path.
    @discardableResult
    func truJSON(
        _ name: String = "tru.json", id: String = "id-from-tru-json",
        secret: String = "S3cr3t-from-tru-json", residency: String? = "eu",
        mode: mode_t = 0o600
    ) -> String {
        let residencyField = residency.map { #", "data_residency": "\#($0)""# } ?? ""
        return write(
            name,
            #"""
            {"project_id": "c69bc0e6-a429-11ea-bb37-0242ac130002", "name": "cellpath test",
             "created_at": "2026-11-30T00:00:00+0000",
             "credentials": [{"client_id": "\#(id)", "client_secret": "\#(secret)",
                              "scopes": ["subscriber_check", "phone_check"],
                              "created_at": "2026-11-30T00:00:00+0000"}]\#(residencyField),
             "_links": {"self": {"href": "https://eu.api.tru.id/console/v0.1/projects/c69bc0e6"}}}
            """#, mode: mode)
    }

    /// A loader over this fixture's files with `environment` and `flags`.
    func loader(environment: [String: String] = [:], flags: [String: String] = [:]) -> ConfigurationLoader {
        ConfigurationLoader(environment: environment, flags: flags, systemPath: systemPath, userPath: userPath)
    }

    /// Loads with `environment` and `flags`.
    func load(
        environment: [String: String] = [:], flags: [String: String] = [:]
    )
        throws(CellpathError) -> EffectiveConfiguration
    {
        try loader(environment: environment, flags: flags).load()
    }
}

extension EffectiveConfiguration {
    /// Every setting key that `read(_:)` knows, in `config show` order (profiles aside).
    static let keys = [
        "general.region", "general.profile", "truid.tru_json", "truid.data_residency",
        "truid.client_id", "truid.client_secret", "sim.prefix", "http.cacert",
        "http.hop_timeout", "http.timeout", "modem.apn", "modem.ip_type"
    ]

    /// Reads the typed setting `key` (`server.<profile>` too) as a command that needs it does,
    /// throwing the setting's error.
    func read(_ key: String) throws(CellpathError) {
        switch key {
        case "general.region": _ = try region
        case "general.profile": _ = try profile
        case "truid.tru_json": _ = try truJSONPath
        case "truid.data_residency": _ = try dataResidency
        case "truid.client_id", "truid.client_secret": _ = try credentials
        case "sim.prefix": _ = try simPrefix
        case "http.cacert": _ = try caFile
        case "http.hop_timeout": _ = try hopTimeout
        case "http.timeout": _ = try timeout
        case "modem.apn": _ = try apn
        case "modem.ip_type": _ = try ipType
        default: _ = try serverBaseURL(for: String(key.dropFirst("server.".count)))
        }
    }

    /// The keys whose settings can be read without an error.
    var usableKeys: [String] {
        Self.keys.filter { key in (try? read(key)) != nil }
    }
}
