import Glibc

/// The environment of this process.
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
}
