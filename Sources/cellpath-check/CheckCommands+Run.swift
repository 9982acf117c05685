import CellpathCLI
import CellpathCore
import CellularHTTP
import Configuration
import ModemCommands
import PhoneNumbers
import SystemSupport
import Workflow

extension CheckCommands {
    static let implementations: [String: CommandAction] = [
        "cellpath subscriber-check": .async { parsed, context in try await runCheck(.subscriberCheck, parsed, context) },
        "cellpath phone-check": .async { parsed, context in try await runCheck(.phoneCheck, parsed, context) },
        "cellpath sim-check": .async { parsed, context in try await runCheck(.simCheck, parsed, context) },
        "cellpath coverage": .async { parsed, context in try await runCoverage(parsed, context) },
    ]

    /// A PhoneCheck, SubscriberCheck or SIMCheck: once, or `--repeat` times (field mode).
    static func runCheck(_ product: CheckProduct, _ parsed: ParsedCommand, _ context: CommandContext) async throws -> CommandOutcome {
        let configuration = try ConfigurationOptions.load(parsed, context)
        let number = try PhoneNumber.parse(try parsed[phone], defaultRegion: try configuration.region,
                                           regionIsExplicit: parsed[ConfigurationOptions.region] != nil)
        if !number.isMobileCapable {
            context.logger.warning("this is a \(number.type.numberPhrase): \(product.commandName) needs a mobile number")
        }
        let options = try checkOptions(parsed)
        try checkMetricsFile(parsed)
        let runs = parsed[repeatCount] ?? 1
        let fieldMode = runs > 1 || parsed[metricsFile] != nil
        let backend = try makeBackend(parsed, configuration, context)
        let runner: CheckRunner
        if product == .simCheck {
            runner = CheckRunner(backend: backend, pathProvider: NoPath(), checkURLRequest: FetchRequest(url: ""), progress: { context.progress.step($0) })
        } else {
            let request = try checkURLRequest(parsed, configuration)
            if let operatorID = parsed[operatorOverride] { _ = try OperatorIDs(parsing: operatorID) }
            let provider = try pathProvider(parsed, context)
            runner = CheckRunner(backend: backend, pathProvider: fieldMode ? FieldRunPath(provider) : provider, checkURLRequest: request,
                                 operatorOverride: try parsed[operatorOverride].map { try OperatorIDs(parsing: $0).headerValue },
                                 progress: { context.progress.step($0) })
        }
        guard fieldMode else {
            let report = await run(product, runner, number: number.e164, options: options)
            try Task.checkCancellation()
            return try CheckListing.outcome(report, context.global.disclosure, hops: !context.global.quiet)
        }
        return try await FieldRun(product: product, runs: runs, interval: parsed[interval], metricsFile: parsed[metricsFile], context: context)
            .run { await run(product, runner, number: number.e164, options: options) } finally: {
                await (runner.pathProvider as? FieldRunPath)?.releaseAtEnd()
            }
    }

    private static func run(_ product: CheckProduct, _ runner: CheckRunner, number: String, options: CheckOptions) async -> CheckRunReport {
        product == .simCheck ? await runner.runSIMCheck(phoneNumber: number, options: options)
            : await runner.run(product, phoneNumber: number, options: options)
    }

    /// `coverage`: the network and products the API sees through the cellular path.
    static func runCoverage(_ parsed: ParsedCommand, _ context: CommandContext) async throws -> CommandOutcome {
        let configuration = try ConfigurationOptions.load(parsed, context)
        let backend = try makeBackend(parsed, configuration, context)
        let runner = CheckRunner(backend: backend, pathProvider: try pathProvider(parsed, context),
                                 checkURLRequest: try checkURLRequest(parsed, configuration), progress: { context.progress.step($0) })
        let report = await runner.coverage()
        try Task.checkCancellation()
        return CoverageListing.outcome(report, context.global.disclosure)
    }

    /// The backend: the tru.ID API with `--direct`, else the development server of `--server`
    /// or of the configuration's profile.
    static func makeBackend(_ parsed: ParsedCommand, _ configuration: EffectiveConfiguration,
                            _ context: CommandContext) throws -> any CheckBackend {
        let http = HTTPClient(route: .defaultNetwork)
        let caFile = try configuration.caFile
        if let caFile { try FetchCommand.checkCABundle(caFile) }
        if try usesDirectBackend(parsed) {
            return try directBackend(configuration, http: http, caFile: caFile, context)
        }
        guard let server = try configuration.serverBaseURL else {
            throw CellpathError(.configuration, "no backend: neither --server nor a server URL for profile '\(try configuration.profile)'",
                                hint: "give --server http://localhost:8080 (a tru.ID dev-server or cellpath serve), set [server] in the configuration, or use --direct with tru.ID credentials")
        }
        return DevServerBackend(baseURL: server, http: http, caFile: caFile, timeout: try configuration.timeout)
    }

    /// The cellular path: an interface configured by another tool (`--interface`), else the modem layer's.
    static func pathProvider(_ parsed: ParsedCommand, _ context: CommandContext) throws -> any CellularPathProvider {
        usesInterface(parsed) ? try FetchCommand.pathProvider(parsed, context) : try FetchCommand.modemPath(parsed, context)
    }
}

/// The path of a SIMCheck: it has none (no device leg).
private struct NoPath: CellularPathProvider {
    func cellularPath() async throws(CellpathError) -> CellularPath {
        throw CellpathError(.internalError, "a SIMCheck has no cellular path")
    }
    func release() async {}
}

extension CheckCommands {
    /// The tru.ID API as the backend (`--direct`).
    static func directBackend(_ configuration: EffectiveConfiguration, http: HTTPClient, caFile: String?,
                              _ context: CommandContext) throws -> any CheckBackend {
        let credentials = try configuration.requireCredentials()
        let endpoint = TruAPIEndpoint(baseURL: try configuration.apiBaseURL, clientID: credentials.clientID,
                                      clientSecret: credentials.clientSecret, caFile: caFile)
        let client = TruAPIClient(endpoint: endpoint, http: http, tokenCache: tokenCache(context.environment),
                                  timeout: try configuration.timeout)
        return DirectBackend(client: client)
    }

    /// The user's token cache file; none for a user whose home (or cache directory's parent)
    /// does not exist: cellpath creates no home directory.
    static func tokenCache(_ environment: [String: String]) -> FileTokenCache? {
        guard let path = FileTokenCache.defaultPath(environment: environment) else { return nil }
        let cacheRoot = path.split(separator: "/").dropLast(2)   // drop cellpath/tokens.json
        let parent = "/" + cacheRoot.dropLast().joined(separator: "/")
        return FileSystem.exists(parent) ? FileTokenCache(path: path) : nil
    }
}
