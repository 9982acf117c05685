import Glibc

/// The environment of this process, and the variables in it that a privileged process must not
/// follow blindly.
public enum ProcessEnvironment {
    /// Every `NAME=value` of `environ` as a dictionary (read at each call).
    public static func current() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// The variables that name where cellpath finds devices, state, configuration and
    /// credentials: the sysfs, /dev and udev roots, the bearer records, the configuration files, the
    /// tru.json, the CAMARA client key, the CA bundle, the home and cache directories, the system bus.
    public static let pathOverrides = [
        "CELLPATH_SYSFS_ROOT", "CELLPATH_DEV_ROOT", "CELLPATH_UDEV_ROOT", "CELLPATH_STATE_DIR",
        "CELLPATH_SYSTEM_CONFIG", "CELLPATH_TRU_JSON", "CELLPATH_VONAGE_PRIVATE_KEY", "CELLPATH_CAMARA_KEY_FILE",
        "CELLPATH_CA_FILE", "CELLPATH_TOKEN_CACHE", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
        "DBUS_SYSTEM_BUS_ADDRESS"
    ]

    /// The variables that give credentials or say where they are sent.
    public static let credentialOverrides = [
        "CELLPATH_CLIENT_ID", "CELLPATH_CLIENT_SECRET", "CELLPATH_API_BASE", "CELLPATH_SERVER_URL",
        "CELLPATH_TWILIO_API_BASE", "CELLPATH_TWILIO_ACCOUNT_SID", "CELLPATH_TWILIO_AUTH_TOKEN",
        "CELLPATH_TWILIO_SERVICE_SID", "CELLPATH_VONAGE_API_BASE", "CELLPATH_VONAGE_APPLICATION_ID",
        "CELLPATH_VONAGE_API_KEY", "CELLPATH_VONAGE_API_SECRET", "CELLPATH_VONAGE_BRAND",
        "CELLPATH_CAMARA_CLIENT_ID", "CELLPATH_CAMARA_API_ROOT", "CELLPATH_CAMARA_ISSUER"
    ]

    /// The file or directory a path override's `value` names: the value itself when absolute,
    /// the socket of a D-Bus `unix:path=` address; nil for anything else.
    public static func namedPath(_ value: String) -> String? {
        if value.hasPrefix("/") { return value }
        let prefix = "unix:path="
        guard value.hasPrefix(prefix) else { return nil }
        let path = value.dropFirst(prefix.count).prefix { $0 != "," && $0 != ";" }
        return path.hasPrefix("/") ? String(path) : nil
    }

    /// `environment` without the path overrides that `keepPath` refuses (given name and value)
    /// and, unless `keepCredentials`, without the credential overrides; with the names removed,
    /// sorted.
    public static func screened(
        _ environment: [String: String], keepCredentials: Bool,
        keepPath: (String, String) -> Bool
    ) -> (environment: [String: String], ignored: [String]) {
        var kept = environment
        var ignored: [String] = []
        for name in pathOverrides {
            if let value = environment[name], !keepPath(name, value) { kept[name] = nil; ignored.append(name) }
        }
        if !keepCredentials {
            for name in credentialOverrides where environment[name] != nil { kept[name] = nil; ignored.append(name) }
        }
        return (kept, ignored.sorted())
    }

    /// Removes `names` from this process's own environment, so that the C libraries it loads
    /// (GLib reads `DBUS_SYSTEM_BUS_ADDRESS`) and the programs it starts do not see them either.
    public static func remove(_ names: [String]) {
        for name in names { unsetenv(name) }
    }
}
