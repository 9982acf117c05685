import CGLib
import CellpathCore

/// One `[group]` of an INI file, keys in file order, values unescaped by GKeyFile.
struct KeyFileGroup {
    var name: String
    var entries: [(key: String, value: String)]
}

/// What reading an INI file gave.
enum KeyFileContents {
    /// The file was read and parsed.
    case loaded([KeyFileGroup])
    /// There is no file at that path (not an error: every configuration file is optional).
    case missing
    /// The file exists but cannot be read (the reason, e.g. "Permission denied").
    case unreadable(String)
}

/// Reads INI files with GLib's GKeyFile; the only place in this module that touches GLib.
/// Callable from any thread (each call uses its own GKeyFile).
enum KeyFile {
    /// Loads and parses `path`; a syntax error is a `.configuration` error naming the file.
    static func load(_ path: String) throws(CellpathError) -> KeyFileContents {
        guard let keyFile = g_key_file_new() else {
            throw CellpathError(.internalError, "couldn't allocate a GKeyFile")
        }
        defer { g_key_file_free(keyFile) }

        var error: UnsafeMutablePointer<GError>?
        if g_key_file_load_from_file(keyFile, path, G_KEY_FILE_NONE, &error) == 0 {
            let (domain, code, message) = consume(error)
            if domain == g_file_error_quark() {
                if code == Int32(G_FILE_ERROR_NOENT.rawValue) || code == Int32(G_FILE_ERROR_NOTDIR.rawValue) {
                    return .missing
                }
                return .unreadable(message)
            }
            throw CellpathError(.configuration, "\(path): \(message)",
                                hint: "\(path) must be an INI file: [group] lines and key=value lines.")
        }

        var groups: [KeyFileGroup] = []
        for groupName in strings(g_key_file_get_groups(keyFile, nil)) {
            var group = KeyFileGroup(name: groupName, entries: [])
            var keysError: UnsafeMutablePointer<GError>?
            let keys = strings(g_key_file_get_keys(keyFile, groupName, nil, &keysError))
            if keysError != nil { _ = consume(keysError) }
            for key in keys {
                var valueError: UnsafeMutablePointer<GError>?
                guard let raw = g_key_file_get_string(keyFile, groupName, key, &valueError) else {
                    let (_, _, message) = consume(valueError)
                    throw CellpathError(.configuration, "\(path) [\(groupName)] \(key): \(message)",
                                        hint: "Fix the value's escape sequences in \(path).")
                }
                group.entries.append((key, String(cString: raw)))
                g_free(raw)
            }
            groups.append(group)
        }
        return .loaded(groups)
    }

    /// Copies a NULL-terminated `gchar**` into Swift strings and frees it.
    private static func strings(_ vector: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
        guard let vector else { return [] }
        defer { g_strfreev(vector) }
        var result: [String] = []
        var index = 0
        while let element = vector[index] {
            result.append(String(cString: element))
            index += 1
        }
        return result
    }

    /// Takes the domain, code and message out of a GError and frees it.
    private static func consume(_ error: UnsafeMutablePointer<GError>?) -> (GQuark, Int32, String) {
        guard let error else { return (0, 0, "unknown error") }
        defer { g_error_free(error) }
        let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        return (error.pointee.domain, error.pointee.code, message)
    }
}
