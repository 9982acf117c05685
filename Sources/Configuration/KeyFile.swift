import CGLib
import CellpathCore
import SystemSupport

/// One `[group]` of an INI file, keys in file order, values unescaped by GKeyFile (or why a
/// value could not be, such as a bad escape sequence).
struct KeyFileGroup {
    var name: String
    var entries: [(key: String, value: Result<String, Problem>)]
}

/// What reading an INI file gave.
enum KeyFileContents {
    /// The file was read and parsed.
    case loaded([KeyFileGroup])
    /// There is no file at that path (not an error: every configuration file is optional).
    case missing
    /// The file exists but cannot be read (the reason, e.g. "Permission denied").
    case unreadable(String)
    /// The file was read but is not an INI file (GKeyFile's reason, e.g. a syntax error).
    case invalid(String)
}

/// Reads INI files with GLib's GKeyFile; the only place in this module that touches GLib.
/// Callable from any thread (each call uses its own GKeyFile).
enum KeyFile {
    /// Loads and parses `path`.
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
            // GLib's message quotes the offending line, which may hold a secret, and has no line number.
            guard let bytes = try? FileSystem.read(path) else { return .invalid(message) }  // a directory, …
            return .invalid(syntaxProblem(in: bytes))
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
                    // GLib's message quotes the value, which may be a secret: say it in our words.
                    _ = consume(valueError)
                    group.entries.append(
                        (key, .failure(Problem("the value is not UTF-8 text or has a bad escape sequence"))))
                    continue
                }
                group.entries.append((key, .success(String(cString: raw))))
                g_free(raw)
            }
            groups.append(group)
        }
        return .loaded(groups)
    }

    /// Why GKeyFile refused `bytes`, in cellpath's words with the line number, never quoting
    /// the file: the first line that is not blank, a `#` comment, a `[group]` line or a
    /// `key=value` line inside a group.
    static func syntaxProblem(in bytes: [UInt8]) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return "it is not UTF-8 text"
        }
        var inGroup = false
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.drop { $0.isWhitespace }
            let number = index + 1
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                guard line.trimmingTrailingWhitespace.hasSuffix("]"), line.count > 2 else {
                    return "line \(number): a group line is '[name]'"
                }
                inGroup = true
            } else if let equals = line.firstIndex(of: "=") {
                guard inGroup else { return "line \(number): a key=value line before the first [group] line" }
                guard line[..<equals].contains(where: { !$0.isWhitespace }) else {
                    return "line \(number): a value without a key"
                }
            } else {
                return "line \(number) is not a [group] line, a key=value line or a # comment"
            }
        }
        return "it is not an INI file"
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

private extension Substring {
    var trimmingTrailingWhitespace: Substring {
        guard let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return self[...last]
    }
}
