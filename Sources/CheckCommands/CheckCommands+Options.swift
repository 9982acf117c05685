import CellpathCLI
import CellpathCore
import CellularHTTP
import CommandLineKit
import Configuration
import Workflow

/// What the check commands read from their command line, validated before anything is sent.
extension CheckCommands {
    /// The check's options; a redirect URL or reference id that could smuggle anything is refused.
    package static func checkOptions(
        apiVersion version: APIVersion, redirectURL: String?, referenceID: String?,
        command: [String]
    ) throws -> CheckOptions {
        if let redirect = redirectURL {
            guard version == .v0_2 else {
                throw UsageError(
                    "'--redirect-url' needs '--api-version v0.2': v0.1 checks have no redirect_url",
                    command: command)
            }
            let lower = redirect.lowercased()
            guard lower.hasPrefix("https://") || lower.hasPrefix("http://"),
                !redirect.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7f } ?? false })
            else {
                throw CellpathError(
                    .dataError,
                    "invalid --redirect-url: expected an absolute http(s) URL without spaces or control characters")
            }
        }
        if let reference = referenceID,
            reference.isEmpty || reference.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                || reference.utf8.count > 256
        {
            throw CellpathError(.dataError, "invalid --reference-id: 1 to 256 bytes without control characters")
        }
        return CheckOptions(apiVersion: version, redirectURL: redirectURL, referenceID: referenceID)
    }

    /// The check_url request's settings: hops, per-hop and overall deadlines, the CA file, and
    /// downgrades refused (as `fetch --strict` does) unless `--allow-downgrade`.
    package static func checkURLRequest(
        allowDowngrade: Bool, maxHops: Int,
        _ configuration: EffectiveConfiguration
    ) throws -> FetchRequest {
        var request = FetchRequest(url: "")
        request.strict = !allowDowngrade
        request.maxHops = maxHops
        request.hopTimeout = try configuration.hopTimeout
        request.totalTimeout = try configuration.timeout
        request.caFile = try configuration.caFile
        return request
    }

    /// `--direct` (refused together with `--server`).
    package static func usesDirectBackend(
        _ backend: CheckBackendOptions,
        command: [String]
    ) throws(UsageError) -> Bool {
        guard backend.direct else { return false }
        if backend.server != nil {
            throw UsageError("'--direct' cannot be combined with '--server': one backend per check", command: command)
        }
        return true
    }

    /// Warns, even with `--quiet`, about each downgraded hop of a chain (`--allow-downgrade` let it
    /// through).
    package static func warnAboutDowngrades(in trace: FetchReport?, _ logger: Logger) {
        FetchCommand.warnAboutDowngrades(in: trace, allowedBy: "--allow-downgrade", logger)
    }

    /// Refuses, before any run, a `--metrics-file` that cannot be written, and `--resume`
    /// without the `--records-file` it resumes.
    package static func checkFieldOptions(_ field: FieldOptions, _ context: CommandContext) throws {
        if let metrics = field.metricsFile {
            try OutputFile.checkWritable(metrics, option: "--metrics-file", as: context.caller)
        }
        if field.resume && field.recordsFile == nil {
            throw UsageError(
                "'--resume' needs '--records-file': the run to resume is read from it", command: context.command)
        }
    }

    /// Without a modem cellpath cannot read the SIM's number: `--interface` needs the number.
    package static func numberNeededWithInterface(command: [String]) -> UsageError {
        UsageError("missing <phone>: with --interface cellpath cannot read the SIM's own number", command: command)
    }
}
