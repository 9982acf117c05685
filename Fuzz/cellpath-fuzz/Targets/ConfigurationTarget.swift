import CellpathCore
import Glibc

@testable import Configuration

/// Configuration layers (`ConfigurationLoader`: a GKeyFile user file, the environment, a
/// tru.json). Input: a control byte, then the user file's text, a NUL byte, and the tru.json
/// named by `CELLPATH_TRU_JSON` (when the control byte's low bit is set) or by the user file.
///
/// Invariants: loading never throws without flags; every setting either has a value or fails with a `.configuration` or `.permission` error;
/// `truid.client_secret` is shown only as `[redacted]`, and the client secret in effect (when the
/// input holds it once) appears in no entry, warning or error message other than the texts an empty
/// configuration prints too (a default such as the profile `development` holds no input).
enum ConfigurationTarget: FuzzTarget {
    static let name = "configuration"

    /// A directory of this process for the files the loader reads.
    nonisolated(unsafe) static var directory: String = {
        var template = Array("/dev/shm/cellpath-fuzz-configuration-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }()

    static func run(_ input: [UInt8]) {
        guard !input.isEmpty else { return }
        let control = input[0]
        let parts = input.dropFirst().split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
        let userPath = directory + "/cellpath.conf", truJSONPath = directory + "/tru.json"
        write(Array(parts[0]), to: userPath)
        write(parts.count > 1 ? Array(parts[1]) : [], to: truJSONPath)
        var environment = ["HOME": directory]
        if control & 1 != 0 { environment["CELLPATH_TRU_JSON"] = truJSONPath }
        let loader = ConfigurationLoader(
            environment: environment, systemPath: directory + "/none.conf", userPath: userPath)
        let configuration: EffectiveConfiguration
        do {
            configuration = try loader.load()
        } catch {
            require(false, "load() threw without flags: \(error.message)")
            return
        }

        let messages = renderedTexts(of: configuration)
        // Only a secret written once, as a value: one the input also has elsewhere (in a key's name) may be shown there.
        // A text that an empty configuration prints too (a default such as the profile `development`) holds no input.
        if let secret = (try? configuration.credentials)??.clientSecret, secret.count >= 8, !directory.contains(secret),
            occurrences(of: Array(secret.utf8), in: input) == 1
        {
            let leaking = messages.filter { $0.contains(secret) && !defaultTexts.contains($0) }
            require(
                leaking.isEmpty, "the client secret appears in what config show prints: \(shown(leaking.first ?? ""))")
        }
    }

    /// What `config show` and the settings' errors print for an empty user file and tru.json.
    static let defaultTexts: Set<String> = {
        let userPath = directory + "/empty.conf"
        write([], to: userPath)
        let loader = ConfigurationLoader(
            environment: ["HOME": directory], systemPath: directory + "/none.conf", userPath: userPath)
        guard let configuration = try? loader.load() else { return [] }
        return Set(renderedTexts(of: configuration))
    }()

    /// Every text of `configuration` that `config show` or an error shows: warnings, entries, each setting's error.
    /// Checks the invariants on each setting and entry on the way.
    private static func renderedTexts(of configuration: EffectiveConfiguration) -> [String] {
        var messages: [String] = configuration.warnings
        func check<T>(_ name: String, _ read: () throws(CellpathError) -> T) {
            do throws(CellpathError) {
                _ = try read()
            } catch {
                require(
                    error.kind == .configuration || error.kind == .permission,
                    "\(name) failed as \(error.kind): \(shown(error.message))")
                messages += [error.message, error.hint ?? ""]
            }
        }
        check("region") { () throws(CellpathError) in try configuration.region }
        check("profile") { () throws(CellpathError) in try configuration.profile }
        check("dataResidency") { () throws(CellpathError) in try configuration.dataResidency }
        check("credentials") { () throws(CellpathError) in try configuration.credentials }
        check("truJSONPath") { () throws(CellpathError) in try configuration.truJSONPath }
        check("simPrefix") { () throws(CellpathError) in try configuration.simPrefix }
        check("caFile") { () throws(CellpathError) in try configuration.caFile }
        check("hopTimeout") { () throws(CellpathError) in try configuration.hopTimeout }
        check("timeout") { () throws(CellpathError) in try configuration.timeout }
        check("apn") { () throws(CellpathError) in try configuration.apn }
        check("serverBaseURL") { () throws(CellpathError) in try configuration.serverBaseURL }

        for entry in configuration.entries {
            if entry.key == "truid.client_secret" || entry.isSecret {
                require(
                    entry.value == nil || entry.value == "[redacted]",
                    "\(entry.key) shown as \(shown(entry.value ?? ""))")
            }
            messages += [entry.value ?? "", entry.error ?? "", entry.origin?.description ?? ""]
        }
        return messages
    }

    private static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
        guard !needle.isEmpty, haystack.count >= needle.count else { return 0 }
        return (0 ... (haystack.count - needle.count)).filter {
            haystack[$0 ..< ($0 + needle.count)].elementsEqual(needle)
        }.count
    }

    private static func write(_ bytes: [UInt8], to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { return }
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
