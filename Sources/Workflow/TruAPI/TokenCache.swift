import CellpathCore
import Glibc
import SystemSupport

/// An access token and when it stops being valid.
public struct CachedToken: Sendable, Equatable {
    public var accessToken: String
    /// Seconds since 1970.
    public var expiresAt: Double

    public init(accessToken: String, expiresAt: Double) {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
    }
}

/// Where access tokens outlive one process. Keys name the API, the client and the scopes,
/// never the secret.
public protocol TokenCache: Sendable {
    func token(for key: String) -> CachedToken?
    func store(_ token: CachedToken, for key: String)
    func remove(_ key: String)
}

/// Tokens in one JSON file readable only by its owner (`CELLPATH_TOKEN_CACHE`, else
/// `$XDG_CACHE_HOME/cellpath/tokens.json`, else `~/.cache/cellpath/tokens.json`), rewritten
/// atomically by `FileSystem.write`.
/// A file with another owner or with group/other permissions is neither read nor replaced.
public struct FileTokenCache: TokenCache {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// The variable that names the cache file itself (a simulated world's, in its run directory).
    public static let pathVariable = "CELLPATH_TOKEN_CACHE"

    /// The cache file named by `CELLPATH_TOKEN_CACHE` (an absolute path), if any.
    public static func namedPath(environment: [String: String]) -> String? {
        environment[pathVariable].flatMap { $0.hasPrefix("/") ? $0 : nil }
    }

    /// The cache file of this user, from `environment` (CELLPATH_TOKEN_CACHE, XDG_CACHE_HOME,
    /// HOME); nil without any.
    public static func defaultPath(environment: [String: String]) -> String? {
        if let named = namedPath(environment: environment) { return named }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/cellpath/tokens.json" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.cache/cellpath/tokens.json" }
        return nil
    }

    public func token(for key: String) -> CachedToken? {
        guard let json = read().json?[key], let token = json[string: "access_token"] else { return nil }
        let expiresAt: Double? =
            switch json["expires_at"] {
            case .int(let value): Double(value)
            case .double(let value): value
            default: nil
            }
        return expiresAt.map { CachedToken(accessToken: token, expiresAt: $0) }
    }

    public func store(_ token: CachedToken, for key: String) {
        let entry = JSONValue.object([
            ("access_token", .string(token.accessToken)), ("expires_at", .int(Int(token.expiresAt)))
        ])
        update { members in
            members.removeAll { $0.0 == key }; members.append((key, entry))
        }
    }

    public func remove(_ key: String) {
        update { members in members.removeAll { $0.0 == key } }
    }

    /// Rewrites the file with `change` applied to its entries, dropping expired ones.
    private func update(_ change: (inout [(String, JSONValue)]) -> Void) {
        let file = read()
        guard file.safe else { return }
        var members: [(String, JSONValue)] = []
        if case .object(let stored)? = file.json { members = stored }
        let now = WallClock.now
        members.removeAll { ($0.1["expires_at"]?.intValue).map { Double($0) <= now } ?? true }
        change(&members)
        write(Array(JSONValue.object(members).serialized.utf8))
    }

    /// Whether the file may be used (missing, or a regular file of this user with mode 0600 or
    /// stricter) and its JSON, if it is safe and holds JSON.
    private func read() -> (safe: Bool, json: JSONValue?) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return (errno == ENOENT, nil) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, Self.isPrivate(info) else { return (false, nil) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0 ..< count]
            if bytes.count > 1 << 20 { return (true, nil) }
        }
        return (true, JSONValue.parse(bytes))
    }

    /// Whether `info` is a regular file owned by this user that no one else may read or write.
    static func isPrivate(_ info: stat) -> Bool {
        (info.st_mode & S_IFMT) == S_IFREG && info.st_uid == geteuid() && (info.st_mode & 0o077) == 0
    }

    /// Replaces the file with `bytes` (mode 0600) through `FileSystem.write`, creating its
    /// directory (mode 0700) first; a failure leaves the cache as it was.
    private func write(_ bytes: [UInt8]) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        guard !directory.isEmpty else { return }
        try? FileSystem.makeDirectories(directory, mode: 0o700)
        try? FileSystem.write(bytes, to: path, mode: 0o600)
    }
}
