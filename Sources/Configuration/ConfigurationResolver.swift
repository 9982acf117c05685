import CellpathCore
import Glibc

/// A source of configuration values, lowest precedence first.
enum Layer: Int {
    case builtIn, system, user, environment, flag
}

/// One value offered for a setting by one source.
struct Candidate {
    var value: String
    var origin: ConfigurationOrigin
    var layer: Layer
    /// Values read from a tru.json rank just below direct settings of the layer that named it.
    var fromTruJSON = false
    /// A config file's directory: relative paths in that file are relative to it.
    var baseDirectory: String?

    var precedence: Int { layer.rawValue * 2 + (fromTruJSON ? 0 : 1) }
}

/// A setting's effective value after validation.
struct Resolved {
    var value: String
    var origin: ConfigurationOrigin
    var layer: Layer
}

/// Collects candidates from every source, then picks and validates each setting's winner.
/// Used once per `ConfigurationLoader.load()`.
struct ConfigurationResolver {
    var home: String?
    private var candidates: [String: [Candidate]] = [:]
    /// CELLPATH_SERVER_URL / --server-url: they apply to whichever profile ends up active.
    private var serverOverrides: [Candidate] = []
    /// Profile names in the order the files define them.
    private var profileNames: [String] = []
    private var warnings: [String] = []
    private var files: [ConfigurationFile] = []

    init(home: String?) {
        self.home = home
        for setting in Setting.all {
            if let value = setting.defaultValue {
                add(setting.name, Candidate(value: value, origin: .builtIn, layer: .builtIn))
            }
        }
    }

    private mutating func add(_ name: String, _ candidate: Candidate) {
        candidates[name, default: []].append(candidate)
    }

    /// Reads one INI file; a missing file is skipped, an unreadable one is skipped with a warning.
    mutating func readFile(_ path: String, role: ConfigurationFile.Role, layer: Layer) throws(CellpathError) {
        let groups: [KeyFileGroup]
        switch try KeyFile.load(path) {
        case .missing:
            files.append(ConfigurationFile(path: path, role: role, status: .missing))
            return
        case let .unreadable(reason):
            files.append(ConfigurationFile(path: path, role: role, status: .unreadable(reason)))
            warnings.append("couldn't read \(path): \(reason); skipped it")
            return
        case let .loaded(loaded):
            files.append(ConfigurationFile(path: path, role: role, status: .loaded))
            groups = loaded
        }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        var holdsSecret = false
        for group in groups {
            guard Setting.groups.contains(group.name) else {
                warnings.append("\(path): unknown group [\(group.name)] ignored"
                    + suggestion(group.name, among: Setting.groups, format: { "[\($0)]" }))
                continue
            }
            for (key, value) in group.entries {
                let origin = ConfigurationOrigin.file(path: path, group: group.name, key: key)
                let isBlank = value.allSatisfy(\.isWhitespace)
                if group.name == Setting.serverGroup {
                    guard case .success = ValueKind.profile.validate(key, baseDirectory: nil, home: nil) else {
                        warnings.append("\(path): [server] \(key) ignored: a profile name has at most "
                            + "32 letters, digits, '-' or '_'")
                        continue
                    }
                    if isBlank { continue }
                    if !profileNames.contains(key) { profileNames.append(key) }
                    add("server.\(key)", Candidate(value: value, origin: origin, layer: layer))
                    continue
                }
                guard let setting = Setting.all.first(where: { $0.group == group.name && $0.key == key }) else {
                    let keys = Setting.all.filter { $0.group == group.name }.map(\.key)
                    warnings.append("\(path): unknown key '\(key)' in [\(group.name)] ignored"
                        + suggestion(key, among: keys, format: { "'\($0)'" }))
                    continue
                }
                if isBlank { continue }
                holdsSecret = holdsSecret || setting.isSecret
                add(setting.name, Candidate(value: value, origin: origin, layer: layer, baseDirectory: directory))
            }
        }
        if holdsSecret, let mode = permissionBits(path) {
            warnIfExposed(path, mode: mode, holding: "a tru.ID client secret")
        }
    }

    /// Takes the settings' CELLPATH_* variables (empty ones count as unset) and warns about
    /// CELLPATH_* names that look like a misspelt setting.
    mutating func addEnvironment(_ environment: [String: String]) {
        for setting in Setting.all {
            guard let name = setting.environment, let value = environment[name],
                  !value.allSatisfy(\.isWhitespace) else { continue }
            add(setting.name, Candidate(value: value, origin: .environment(name), layer: .environment))
        }
        if let value = environment[Setting.serverURLEnvironment], !value.allSatisfy(\.isWhitespace) {
            serverOverrides.append(Candidate(value: value, origin: .environment(Setting.serverURLEnvironment),
                                             layer: .environment))
        }
        let known = Setting.environmentNames
        for name in environment.keys.sorted() where name.hasPrefix("CELLPATH_") && !known.contains(name) {
            if let near = nearest(name, among: known) {
                warnings.append("environment \(name) is not a cellpath setting; did you mean \(near)?")
            }
        }
    }

    /// Takes flag values keyed by `ConfigurationFlag` raw values (a leading `--` is allowed).
    mutating func addFlags(_ flags: [String: String]) throws(CellpathError) {
        for (rawName, value) in flags.sorted(by: { $0.key < $1.key }) {
            let name = rawName.hasPrefix("--") ? String(rawName.dropFirst(2)) : rawName
            guard let flag = ConfigurationFlag(rawValue: name) else {
                if name.hasPrefix("client") {
                    throw CellpathError(.usage, "tru.ID credentials are never taken from the command line",
                                        hint: "Use --tru-json PATH, or CELLPATH_CLIENT_ID and CELLPATH_CLIENT_SECRET.")
                }
                throw CellpathError(.internalError, "--\(name) is not a configuration flag")
            }
            let candidate = Candidate(value: value, origin: .flag(name), layer: .flag)
            if flag == .serverURL {
                serverOverrides.append(candidate)
            } else if let setting = Setting.all.first(where: { $0.flag == flag }) {
                add(setting.name, candidate)
            }
        }
    }

    /// Picks every setting's winner, validates it, reads the tru.json and assembles the result.
    mutating func resolve() throws(CellpathError) -> EffectiveConfiguration {
        let profile = try settle(.profile)!  // it has a default
        let activeServer = "server.\(profile.value)"
        for candidate in serverOverrides { add(activeServer, candidate) }
        if !serverOverrides.isEmpty && !profileNames.contains(profile.value) { profileNames.append(profile.value) }

        let truJSON = try settle(.truJSON)
        var truJSONResidency: String?
        if let truJSON { truJSONResidency = try readTruJSON(truJSON) }

        let region = try settle(.region)
        let residency = try settle(.dataResidency)!
        let clientID = try settle(.clientID)
        let clientSecret = try settle(.clientSecret)
        let simPrefix = try settle(.simPrefix)!
        let caFile = try settle(.caFile)
        let hopTimeout = try settle(.hopTimeout)!
        let timeout = try settle(.timeout)!
        var servers: [(name: String, resolved: Resolved)] = []
        for name in profileNames {
            if let url = try settle("server.\(name)", kind: .url, isSecret: false) { servers.append((name, url)) }
        }

        var credentials: TruIDCredentials?
        switch (clientID, clientSecret) {
        case let (id?, secret?):
            credentials = TruIDCredentials(clientID: id.value, clientSecret: secret.value,
                                           clientIDOrigin: id.origin, clientSecretOrigin: secret.origin)
            if id.origin.container != secret.origin.container {
                warnings.append("the tru.ID client_id comes from \(id.origin) but the client_secret from "
                    + "\(secret.origin); make sure they belong together")
            }
        case let (id?, nil):
            warnings.append("tru.ID credentials incomplete: client_id is set (\(id.origin)) but no client_secret")
        case let (nil, secret?):
            warnings.append("tru.ID credentials incomplete: client_secret is set (\(secret.origin)) but no client_id")
        case (nil, nil):
            break
        }
        if let truJSON, let truJSONResidency, !residency.origin.isTruJSON,
           truJSONResidency.lowercased() != residency.value {
            warnings.append("data_residency '\(residency.value)' (\(residency.origin)) differs from "
                + "'\(truJSONResidency)' in \(truJSON.value); the credentials may not work there")
        }
        if profile.origin != .builtIn && !servers.contains(where: { $0.name == profile.value }) {
            warnings.append("profile '\(profile.value)' (\(profile.origin)) has no server URL; "
                + "set [server] \(profile.value)=https://…")
        }
        let hop = Self.duration(hopTimeout.value), total = Self.duration(timeout.value)
        if hop > total {
            warnings.append("http.hop_timeout \(hopTimeout.value) s (\(hopTimeout.origin)) is longer than "
                + "http.timeout \(timeout.value) s (\(timeout.origin)); the overall timeout wins")
        }

        func entry(_ setting: Setting, _ resolved: Resolved?) -> ConfigurationEntry {
            let value = resolved.map { setting.isSecret ? Disclosure.redacted.reveal($0.value, as: .secret) : $0.value }
            return ConfigurationEntry(key: setting.name, value: value, isSecret: setting.isSecret,
                                      origin: resolved?.origin)
        }
        var entries = [entry(.region, region), entry(.profile, profile)]
        entries += servers.map {
            ConfigurationEntry(key: "server.\($0.name)", value: $0.resolved.value, isSecret: false,
                               origin: $0.resolved.origin)
        }
        entries += [entry(.truJSON, truJSON), entry(.dataResidency, residency), entry(.clientID, clientID),
                    entry(.clientSecret, clientSecret), entry(.simPrefix, simPrefix), entry(.caFile, caFile),
                    entry(.hopTimeout, hopTimeout), entry(.timeout, timeout)]

        return EffectiveConfiguration(
            region: region?.value, profile: profile.value,
            dataResidency: DataResidency(rawValue: residency.value)!, credentials: credentials,
            truJSONPath: truJSON?.value, simPrefix: simPrefix.value, caFile: caFile?.value,
            hopTimeout: hop, timeout: total, entries: entries, warnings: warnings, files: files,
            serverURLs: Dictionary(uniqueKeysWithValues: servers.map { ($0.name, $0.resolved.value) }))
    }

    /// Reads the effective tru.json and offers its values one notch below the layer that named
    /// it; returns its `data_residency`, if any.
    private mutating func readTruJSON(_ named: Resolved) throws(CellpathError) -> String? {
        let path = named.value
        let contents = try TruJSONFile.read(path, namedBy: named.origin)
        files.append(ConfigurationFile(path: path, role: .truJSON, status: .loaded))
        func offer(_ setting: Setting, _ value: String, field: String) {
            add(setting.name, Candidate(value: value, origin: .truJSON(path: path, field: field),
                                        layer: named.layer, fromTruJSON: true))
        }
        offer(.clientID, contents.clientID, field: "credentials[0].client_id")
        offer(.clientSecret, contents.clientSecret, field: "credentials[0].client_secret")
        if let residency = contents.dataResidency { offer(.dataResidency, residency, field: "data_residency") }
        warnIfExposed(path, mode: contents.mode, holding: "tru.ID credentials")
        return contents.dataResidency
    }

    private mutating func settle(_ setting: Setting) throws(CellpathError) -> Resolved? {
        try settle(setting.name, kind: setting.kind, isSecret: setting.isSecret)
    }

    /// Validates the highest-precedence candidate (an invalid one is an error) and warns
    /// about invalid candidates it overrides.
    private mutating func settle(_ name: String, kind: ValueKind, isSecret: Bool) throws(CellpathError) -> Resolved? {
        guard let list = candidates[name], !list.isEmpty else { return nil }
        // Highest precedence first; within one precedence the later source wins.
        let ordered = list.indices.sorted { (list[$0].precedence, $0) > (list[$1].precedence, $1) }.map { list[$0] }
        let winner = ordered[0]
        let value: String
        switch kind.validate(winner.value, baseDirectory: winner.baseDirectory, home: home) {
        case let .success(normalised): value = normalised
        case let .failure(problem): throw Self.error(winner, problem, isSecret: isSecret)
        }
        for loser in ordered.dropFirst() where loser.layer != .builtIn {
            if case let .failure(problem) = kind.validate(loser.value, baseDirectory: loser.baseDirectory, home: home) {
                warnings.append(Self.error(loser, problem, isSecret: isSecret).message
                    + " (overridden by \(winner.origin))")
            }
        }
        return Resolved(value: value, origin: winner.origin, layer: winner.layer)
    }

    /// The error for an invalid value: `.usage` for a flag, `.configuration` otherwise.
    private static func error(_ candidate: Candidate, _ problem: Problem, isSecret: Bool) -> CellpathError {
        let shown = isSecret ? "" : " '\(candidate.value)'"
        let message = "\(candidate.origin): invalid value\(shown): \(problem.text)"
        switch candidate.origin {
        case .flag:
            return CellpathError(.usage, message)
        case let .file(path, group, key):
            return CellpathError(.configuration, message, hint: "Fix or remove '\(key)' in [\(group)] of \(path).")
        case let .environment(name):
            return CellpathError(.configuration, message, hint: "Fix or unset \(name).")
        case let .truJSON(path, _):
            return CellpathError(.configuration, message, hint: "Fix \(path).")
        case .builtIn:
            return CellpathError(.internalError, message)
        }
    }

    private static func duration(_ seconds: String) -> Duration {
        .nanoseconds(Int64((Double(seconds)! * 1e9).rounded()))
    }

    /// `st_mode & 0o777` of `path`, or nil when it cannot be examined.
    private func permissionBits(_ path: String) -> UInt32? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt32(info.st_mode) & 0o777
    }

    /// Warns when a file holding secrets is accessible to its group or to others.
    private mutating func warnIfExposed(_ path: String, mode: UInt32, holding what: String) {
        guard mode & 0o077 != 0 else { return }
        let octal = String(mode, radix: 8)
        warnings.append("\(path) holds \(what) but is accessible by its group or others "
            + "(mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal)); run 'chmod 600 \(path)'")
    }

    /// "; did you mean X?" for the nearest candidate, or "".
    private func suggestion(_ word: String, among candidates: [String], format: (String) -> String) -> String {
        nearest(word, among: candidates).map { "; did you mean \(format($0))?" } ?? ""
    }
}

/// The candidate at the smallest edit distance from `word`, if it is at most 2.
func nearest(_ word: String, among candidates: [String]) -> String? {
    let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return nil }
    return best.0
}

/// Levenshtein distance between two strings, by characters.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in stride(from: 1, through: b.count, by: 1) {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}
