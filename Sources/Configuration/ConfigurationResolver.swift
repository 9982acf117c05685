import CellpathCore
import Glibc
import SystemSupport

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
    /// Set when the source could not say what its value is (a file that is not an INI file, a
    /// tru.json that cannot be read): the setting fails with it if this candidate wins.
    var failure: SettingFailure?

    var precedence: Int { layer.rawValue * 2 + (fromTruJSON ? 0 : 1) }

    /// A candidate that stands for a value its source could not give.
    static func failed(_ failure: SettingFailure, layer: Layer, fromTruJSON: Bool = false) -> Candidate {
        Candidate(value: "", origin: failure.origin, layer: layer, fromTruJSON: fromTruJSON, failure: failure)
    }
}

/// A setting's effective value after validation.
struct Resolved {
    var value: String
    var origin: ConfigurationOrigin
    var layer: Layer
}

/// Why a setting has no usable value: the error for a command that needs it, and what
/// `config show` prints beside the setting's source.
struct SettingFailure: Error {
    var error: CellpathError
    var origin: ConfigurationOrigin
    /// The reason without the origin, e.g. "invalid value 'soon': expected a number of seconds…".
    var problem: String
}

/// A setting after its candidates were weighed: the winner, nil when unset, or why it is unusable.
typealias Settled = Result<Resolved?, SettingFailure>

/// Collects candidates from every source, then picks and validates each setting's winner.
/// A value that is not valid fails only its own setting (and those derived from it), so that
/// a command fails only when it needs a broken setting. Used once per `ConfigurationLoader.load()`.
struct ConfigurationResolver {
    var home: String?
    /// Whose rights a tru.json named by a flag is read with (`ConfigurationLoader.caller`).
    var caller: FileIdentity?
    private var candidates: [String: [Candidate]] = [:]
    /// CELLPATH_SERVER_URL / --server-url: they apply to whichever profile ends up active.
    private var serverOverrides: [Candidate] = []
    /// Files that are not INI files: they may have set any setting, the active profile's URL too.
    private var brokenFiles: [(failure: SettingFailure, layer: Layer)] = []
    /// Profile names in the order the files define them.
    private var profileNames: [String] = []
    private var warnings: [String] = []
    private var files: [ConfigurationFile] = []

    init(home: String?, caller: FileIdentity? = nil) {
        self.home = home
        self.caller = caller
        for setting in Setting.all {
            if let value = setting.defaultValue {
                add(setting.name, Candidate(value: value, origin: .builtIn, layer: .builtIn))
            }
        }
    }

    private mutating func add(_ name: String, _ candidate: Candidate) {
        candidates[name, default: []].append(candidate)
    }

    /// Reads one INI file; a missing file is skipped, an unreadable one is skipped with a
    /// warning, and one that is not an INI file fails every setting it could have set.
    mutating func readFile(_ path: String, role: ConfigurationFile.Role, layer: Layer) {
        let groups: [KeyFileGroup]
        let contents: KeyFileContents
        do {
            contents = try KeyFile.load(path)
        } catch {
            contents = .invalid(error.message)
        }
        switch contents {
        case .missing:
            files.append(ConfigurationFile(path: path, role: role, status: .missing))
            return
        case let .unreadable(reason):
            files.append(ConfigurationFile(path: path, role: role, status: .unreadable(reason)))
            warnings.append("couldn't read \(path): \(reason); skipped it")
            return
        case let .invalid(reason):
            files.append(ConfigurationFile(path: path, role: role, status: .invalid(reason)))
            let error = CellpathError(
                .configuration, "\(path): \(reason)",
                hint: "\(path) must be an INI file: [group] lines and key=value lines.")
            // Every setting it could set shows this, short: the file's own line says where.
            let failure = SettingFailure(
                error: error, origin: .brokenFile(path: path), problem: "the file is not an INI file (see files)")
            brokenFiles.append((failure, layer))
            for setting in Setting.all { add(setting.name, .failed(failure, layer: layer)) }
            return
        case let .loaded(loaded):
            files.append(ConfigurationFile(path: path, role: role, status: .loaded))
            groups = loaded
        }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        var holdsSecret = false
        for group in groups {
            guard Setting.groups.contains(group.name) else {
                warnings.append(
                    "\(path): unknown group [\(group.name)] ignored"
                        + suggestion(group.name, among: Setting.groups, format: { "[\($0)]" }))
                continue
            }
            for (key, read) in group.entries {
                let origin = ConfigurationOrigin.file(path: path, group: group.name, key: key)
                let candidate: Candidate
                switch read {
                case let .success(value):
                    if value.allSatisfy(\.isWhitespace) { continue }
                    candidate = Candidate(value: value, origin: origin, layer: layer, baseDirectory: directory)
                case let .failure(problem):
                    let error = CellpathError(
                        .configuration, "\(origin): \(problem.text)",
                        hint: "Fix or remove '\(key)' in [\(group.name)] of \(path).")
                    candidate = .failed(
                        SettingFailure(error: error, origin: origin, problem: problem.text), layer: layer)
                }
                if group.name == Setting.serverGroup {
                    guard case .success = ValueKind.profile.validate(key, baseDirectory: nil, home: nil) else {
                        warnings.append(
                            "\(path): [server] \(key) ignored: a profile name has at most "
                                + "32 letters, digits, '-' or '_'")
                        continue
                    }
                    if !profileNames.contains(key) { profileNames.append(key) }
                    add("server.\(key)", candidate)
                    continue
                }
                guard let setting = Setting.all.first(where: { $0.group == group.name && $0.key == key }) else {
                    let keys = Setting.all.filter { $0.group == group.name }.map(\.key)
                    warnings.append(
                        "\(path): unknown key '\(key)' in [\(group.name)] ignored"
                            + suggestion(key, among: keys, format: { "'\($0)'" }))
                    continue
                }
                holdsSecret = holdsSecret || setting.isSecret
                add(setting.name, candidate)
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
                !value.allSatisfy(\.isWhitespace)
            else { continue }
            add(setting.name, Candidate(value: value, origin: .environment(name), layer: .environment))
        }
        if let value = environment[Setting.serverURLEnvironment], !value.allSatisfy(\.isWhitespace) {
            serverOverrides.append(
                Candidate(
                    value: value, origin: .environment(Setting.serverURLEnvironment),
                    layer: .environment))
        }
        // Names compared without their common prefix: CELLPATH_BIN is no typo of CELLPATH_APN.
        let prefix = "CELLPATH_"
        let known = Setting.environmentNames
        let knownWords = known.map { String($0.dropFirst(prefix.count)) }
        for name in environment.keys.sorted() where name.hasPrefix(prefix) && !known.contains(name) {
            if let near = nearest(String(name.dropFirst(prefix.count)), among: knownWords) {
                warnings.append("environment \(name) is not a cellpath setting; did you mean \(prefix)\(near)?")
            }
        }
    }

    /// Takes flag values keyed by `ConfigurationFlag` raw values (a leading `--` is allowed).
    mutating func addFlags(_ flags: [String: String]) throws(CellpathError) {
        for (rawName, value) in flags.sorted(by: { $0.key < $1.key }) {
            let name = rawName.hasPrefix("--") ? String(rawName.dropFirst(2)) : rawName
            guard let flag = ConfigurationFlag(rawValue: name) else {
                if name.hasPrefix("client") {
                    throw CellpathError(
                        .usage, "tru.ID credentials are never taken from the command line",
                        hint: "Use --tru-json PATH, or CELLPATH_CLIENT_ID and CELLPATH_CLIENT_SECRET.")
                }
                throw CellpathError(.internalError, "--\(name) is not a configuration flag")
            }
            let candidate = Candidate(value: value, origin: .flag(name), layer: .flag)
            // What the user typed on this command line is checked now, whatever the command needs.
            let setting = Setting.all.first { $0.flag == flag }
            if case let .failure(problem) = (setting?.kind ?? .url).validate(value, baseDirectory: nil, home: home) {
                throw Self.error(candidate, problem, isSecret: false)
            }
            if flag == .serverURL {
                serverOverrides.append(candidate)
            } else if let setting {
                add(setting.name, candidate)
            }
        }
    }

    /// Picks every setting's winner, validates it, reads the tru.json and assembles the result;
    /// a setting that is not usable carries its error instead of a value.
    mutating func resolve() -> EffectiveConfiguration {
        let profile = settle(.profile)
        if case let .success(profile?) = profile {
            let activeServer = "server.\(profile.value)"
            for candidate in serverOverrides { add(activeServer, candidate) }
            for broken in brokenFiles { add(activeServer, .failed(broken.failure, layer: broken.layer)) }
            if !(serverOverrides.isEmpty && brokenFiles.isEmpty) && !profileNames.contains(profile.value) {
                profileNames.append(profile.value)
            }
        }

        let truJSON = settle(.truJSON)
        let truJSONResidency = readTruJSON(truJSON)

        let region = settle(.region)
        let residency = settle(.dataResidency)
        let apiBase = settle(.apiBase)
        let clientID = settle(.clientID)
        let clientSecret = settle(.clientSecret)
        let simPrefix = settle(.simPrefix)
        let caFile = settle(.caFile)
        let hopTimeout = settle(.hopTimeout)
        let timeout = settle(.timeout)
        let apn = settle(.apn)
        let ipType = settle(.ipType)
        let camara = Setting.camara.map { settle($0) }
        let servers = profileNames.map { name in
            (name: name, settled: settle("server.\(name)", kind: .url, isSecret: false))
        }

        let providers = Setting.providers.map { (setting: $0, settled: settle($0)) }
        let credentials = settleCredentials(clientID: clientID, clientSecret: clientSecret)
        if case let .success(truJSON?) = truJSON, let truJSONResidency, case let .success(residency?) = residency,
            !residency.origin.isTruJSON, truJSONResidency.lowercased() != residency.value
        {
            warnings.append(
                "data_residency '\(residency.value)' (\(residency.origin)) differs from "
                    + "'\(truJSONResidency)' in \(truJSON.value); the credentials may not work there")
        }
        if case let .success(profile?) = profile, profile.origin != .builtIn,
            !servers.contains(where: { $0.name == profile.value })
        {
            warnings.append(
                "profile '\(profile.value)' (\(profile.origin)) has no server URL; "
                    + "set [server] \(profile.value)=https://…")
        }
        if case let .success(hop?) = hopTimeout, case let .success(total?) = timeout,
            Self.duration(hop.value) > Self.duration(total.value)
        {
            warnings.append(
                "http.hop_timeout \(hop.value) s (\(hop.origin)) is longer than "
                    + "http.timeout \(total.value) s (\(total.origin)); the overall timeout wins")
        }

        func entry(_ key: String, _ settled: Settled, isSecret: Bool) -> ConfigurationEntry {
            switch settled {
            case let .success(resolved):
                let value = resolved.map { isSecret ? Disclosure.redacted.reveal($0.value, as: .secret) : $0.value }
                return ConfigurationEntry(key: key, value: value, isSecret: isSecret, origin: resolved?.origin)
            case let .failure(failure):
                return ConfigurationEntry(
                    key: key, value: nil, isSecret: isSecret, origin: failure.origin,
                    error: failure.problem)
            }
        }
        func entry(_ setting: Setting, _ settled: Settled) -> ConfigurationEntry {
            entry(setting.name, settled, isSecret: setting.isSecret)
        }
        var entries = [entry(.region, region), entry(.profile, profile)]
        entries += servers.map { entry("server.\($0.name)", $0.settled, isSecret: false) }
        entries += [
            entry(.truJSON, truJSON), entry(.dataResidency, residency), entry(.apiBase, apiBase),
            entry(.clientID, clientID),
            entry(.clientSecret, clientSecret), entry(.simPrefix, simPrefix), entry(.caFile, caFile),
            entry(.hopTimeout, hopTimeout), entry(.timeout, timeout), entry(.apn, apn),
            entry(.ipType, ipType)
        ]
        // The `[camara]` client's four settings first, then its own provider settings (redirect_uri).
        let camaraGroup = providers.filter { $0.setting.group == "camara" }
        entries += providers.filter { $0.setting.group != "camara" }.map { entry($0.setting, $0.settled) }
        entries += zip(Setting.camara, camara).map { entry($0, $1) }
        entries += camaraGroup.map { entry($0.setting, $0.settled) }

        return EffectiveConfiguration(
            region: Self.value(region) { $0 },
            profile: Self.value(profile) { $0 }.map { $0! },  // it has a default
            dataResidency: Self.value(residency) { DataResidency(rawValue: $0)! }.map { $0! },
            apiBase: Self.value(apiBase) { $0 },
            credentials: credentials,
            truJSONPath: Self.value(truJSON) { $0 },
            simPrefix: Self.value(simPrefix) { $0 }.map { $0! },
            caFile: Self.value(caFile) { $0 },
            hopTimeout: Self.value(hopTimeout, Self.duration).map { $0! },
            timeout: Self.value(timeout, Self.duration).map { $0! },
            apn: Self.value(apn) { $0 },
            ipType: Self.value(ipType) { BearerIPType(rawValue: $0)! }.map { $0! },  // it has a default
            camara: Self.camaraSettings(camara),
            serverURLs: Dictionary(
                uniqueKeysWithValues: servers.map { server in
                    (server.name, Self.value(server.settled) { $0 })
                }),
            providerValues: Dictionary(
                uniqueKeysWithValues: providers.map { ($0.setting.name, Self.value($0.settled) { $0 }) }),
            entries: entries, warnings: warnings, files: files)
    }

    /// The typed value of a settled setting (nil when unset), or the error a command gets for it.
    private static func value<T>(_ settled: Settled, _ convert: (String) -> T) -> Result<T?, CellpathError> {
        settled.map { $0.map { convert($0.value) } }.mapError(\.error)
    }

    /// The `[camara]` profile from its four settings (`Setting.camara` order): unusable when one
    /// is, or when some but not all are set; nil when none is.
    private static func camaraSettings(_ settled: [Settled]) -> Result<CAMARASettings?, CellpathError> {
        var values: [Resolved?] = []
        for setting in settled {
            switch setting {
            case let .failure(failure): return .failure(failure.error)
            case let .success(resolved): values.append(resolved)
            }
        }
        let missing = zip(Setting.camara, values).filter { $0.1 == nil }.map(\.0)
        guard !missing.isEmpty else {
            let set = values.compactMap { $0 }
            return .success(
                CAMARASettings(
                    apiRoot: set[0].value, issuer: set[1].value, clientID: set[2].value, keyFile: set[3].value,
                    keyFileOrigin: set[3].origin))
        }
        if missing.count == Setting.camara.count { return .success(nil) }
        return .failure(
            CellpathError(
                .configuration,
                "the [camara] profile is incomplete: \(missing.map(\.name).joined(separator: ", ")) not set",
                hint:
                    "Set \(missing.map { "\($0.environment!) or [camara] \($0.key)" }.joined(separator: ", ")) (docs/configuration.md)."
            ))
    }

    /// Credentials from the client id and secret; unusable when either is, with warnings about
    /// an incomplete pair or a pair from two places.
    private mutating func settleCredentials(
        clientID: Settled, clientSecret: Settled
    )
        -> Result<TruIDCredentials?, CellpathError>
    {
        switch (clientID, clientSecret) {
        case let (.failure(failure), _), let (_, .failure(failure)):
            return .failure(failure.error)
        case let (.success(id?), .success(secret?)):
            if id.origin.container != secret.origin.container {
                warnings.append(
                    "the tru.ID client_id comes from \(id.origin) but the client_secret from "
                        + "\(secret.origin); make sure they belong together")
            }
            return .success(
                TruIDCredentials(
                    clientID: id.value, clientSecret: secret.value,
                    clientIDOrigin: id.origin, clientSecretOrigin: secret.origin))
        case let (.success(id?), .success(nil)):
            warnings.append("tru.ID credentials incomplete: client_id is set (\(id.origin)) but no client_secret")
        case let (.success(nil), .success(secret?)):
            warnings.append("tru.ID credentials incomplete: client_secret is set (\(secret.origin)) but no client_id")
        case (.success(nil), .success(nil)):
            break
        }
        return .success(nil)
    }

    /// Reads the effective tru.json, if one is named, and offers its values one notch below the
    /// layer that named it; returns its `data_residency`, if any. When it cannot be read (or its
    /// name is not valid), the settings it could have given fail with that error.
    private mutating func readTruJSON(_ named: Settled) -> String? {
        switch named {
        case .success(nil):
            return nil
        case let .failure(failure):
            let layer = candidates[Setting.truJSON.name]?.first { $0.origin == failure.origin }?.layer ?? .builtIn
            let unusable = SettingFailure(
                error: failure.error, origin: failure.origin,
                problem: "truid.tru_json is not usable: \(failure.problem)")
            for (setting, _) in Self.truJSONFields {
                add(setting.name, .failed(unusable, layer: layer, fromTruJSON: true))
            }
            return nil
        case let .success(named?):
            let path = named.value
            let contents: TruJSONFile.Contents
            do {
                let reader: FileIdentity? = if case .flag = named.origin { caller } else { nil }
                contents = try TruJSONFile.read(path, namedBy: named.origin, as: reader)
            } catch {
                files.append(ConfigurationFile(path: path, role: .truJSON, status: Self.status(of: path, error)))
                for (setting, field) in Self.truJSONFields {
                    let failure = SettingFailure(
                        error: error, origin: .truJSON(path: path, field: field),
                        problem: error.message)
                    add(setting.name, .failed(failure, layer: named.layer, fromTruJSON: true))
                }
                return nil
            }
            files.append(ConfigurationFile(path: path, role: .truJSON, status: .loaded))
            let values = [
                Setting.clientID.name: contents.clientID, Setting.clientSecret.name: contents.clientSecret,
                Setting.dataResidency.name: contents.dataResidency
            ]
            for (setting, field) in Self.truJSONFields {
                guard let value = values[setting.name] ?? nil else { continue }
                add(
                    setting.name,
                    Candidate(
                        value: value, origin: .truJSON(path: path, field: field),
                        layer: named.layer, fromTruJSON: true))
            }
            warnIfExposed(path, mode: contents.mode, holding: "tru.ID credentials")
            return contents.dataResidency
        }
    }

    /// The settings a tru.json can give, and the field of each.
    private static let truJSONFields: [(setting: Setting, field: String)] = [
        (.clientID, "credentials[0].client_id"), (.clientSecret, "credentials[0].client_secret"),
        (.dataResidency, "data_residency")
    ]

    /// A tru.json's status after `error`: missing, unreadable (no permission) or invalid.
    private static func status(of path: String, _ error: CellpathError) -> ConfigurationFile.Status {
        var info = stat()
        if stat(path, &info) != 0 && errno == ENOENT { return .missing }
        return error.kind == .permission ? .unreadable(error.message) : .invalid(error.message)
    }

    private mutating func settle(_ setting: Setting) -> Settled {
        settle(setting.name, kind: setting.kind, isSecret: setting.isSecret)
    }

    /// Validates the highest-precedence candidate (an invalid one makes the setting unusable)
    /// and warns about invalid candidates it overrides.
    private mutating func settle(_ name: String, kind: ValueKind, isSecret: Bool) -> Settled {
        guard let list = candidates[name], !list.isEmpty else { return .success(nil) }
        // Highest precedence first; within one precedence the later source wins.
        let ordered = list.indices.sorted { (list[$0].precedence, $0) > (list[$1].precedence, $1) }.map { list[$0] }
        let winner = ordered[0]
        if let failure = winner.failure { return .failure(failure) }
        let value: String
        switch kind.validate(winner.value, baseDirectory: winner.baseDirectory, home: home) {
        case let .success(normalised): value = normalised
        case let .failure(problem):
            return .failure(
                SettingFailure(
                    error: Self.error(winner, problem, isSecret: isSecret), origin: winner.origin,
                    problem: Self.invalidValue(winner, problem, isSecret: isSecret)))
        }
        for loser in ordered.dropFirst() where loser.layer != .builtIn && loser.failure == nil {
            if case let .failure(problem) = kind.validate(loser.value, baseDirectory: loser.baseDirectory, home: home) {
                warnings.append(
                    Self.error(loser, problem, isSecret: isSecret).message
                        + " (overridden by \(winner.origin))")
            }
        }
        return .success(Resolved(value: value, origin: winner.origin, layer: winner.layer))
    }

    /// "invalid value 'soon': expected …", without the value when it is a secret.
    private static func invalidValue(_ candidate: Candidate, _ problem: Problem, isSecret: Bool) -> String {
        "invalid value\(isSecret ? "" : " '\(candidate.value)'"): \(problem.text)"
    }

    /// The error for an invalid value: `.usage` for a flag, `.configuration` otherwise.
    private static func error(_ candidate: Candidate, _ problem: Problem, isSecret: Bool) -> CellpathError {
        let message = "\(candidate.origin): \(invalidValue(candidate, problem, isSecret: isSecret))"
        switch candidate.origin {
        case .flag:
            return CellpathError(.usage, message)
        case let .file(path, group, key):
            return CellpathError(.configuration, message, hint: "Fix or remove '\(key)' in [\(group)] of \(path).")
        case let .environment(name):
            return CellpathError(.configuration, message, hint: "Fix or unset \(name).")
        case let .truJSON(path, _):
            return CellpathError(.configuration, message, hint: "Fix \(path).")
        case .builtIn, .brokenFile:
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
        warnings.append(
            "\(path) holds \(what) but is accessible by its group or others "
                + "(mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal)); run 'chmod 600 \(path)'")
    }

    /// "; did you mean X?" for the nearest candidate, or "".
    private func suggestion(_ word: String, among candidates: [String], format: (String) -> String) -> String {
        nearest(word, among: candidates).map { "; did you mean \(format($0))?" } ?? ""
    }
}

/// The candidate at the smallest edit distance from `word`, if it is at most 2 and at most a
/// third of `word`'s length (two edits turn a short word into another word: `bin` is no `apn`).
func nearest(_ word: String, among candidates: [String]) -> String? {
    let limit = min(2, word.count / 3), lowered = word.lowercased()
    // The distance is at least the difference of the lengths: only candidates of a near length are measured.
    let scored = candidates.filter { abs($0.count - word.count) <= limit }.map {
        ($0, editDistance(lowered, $0.lowercased()))
    }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= limit else { return nil }
    return best.0
}

/// Levenshtein distance between two strings, by characters.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    var previous = Array(0 ... b.count)
    for i in 1 ... a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in stride(from: 1, through: b.count, by: 1) {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}
