import CellpathCLI
import CellpathCore
import CellularHTTP
import CommandLineKit
import Configuration
import Glibc
import ProviderClients
import Server
import Workflow

extension ProgramImplementations {
    /// `serve`, which `cellpath-helper` runs (Sources/HelperCommands).
    package static let serveCommands: [CommandImplementation] = [.async(ServeCommand.spec, ServeCommand.run)]
}

extension ServeCommand {
    static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        let configuration = try ConfigurationOptions.load(options, context)
        var settings = ServeSettings(
            defaultRegion: try configuration.region, logPersonalData: context.global.disclosure == .full)
        (settings.listenAddress, settings.listenPort) = try listenAddress(options.listen)
        settings.tlsCertificate = options.tlsCert
        settings.tlsKey = options.tlsKey
        guard (settings.tlsCertificate == nil) == (settings.tlsKey == nil) else {
            throw CellpathError(.usage, "--tls-cert and --tls-key go together")
        }
        if let path = options.apiKeyFile {
            settings.apiKey = try readKey(path)
            if let warning = exposedKeyWarning(path) { context.logger.warning("\(warning)") }
        }
        settings.corsOrigins = options.corsOrigin
        settings.serverNames = options.serverName
        settings.allowsFormBodies = options.allowFormBodies
        settings.offersCoverageToken = options.coverageTokenRoute
        if let value = options.maxBody { settings.limits.maxBodyBytes = value }
        if let value = options.maxConnections { settings.limits.maxConnections = value }
        if let value = options.maxConnectionsPerAddress { settings.limits.maxConnectionsPerAddress = value }
        if let value = options.rateLimit { settings.limits.requestsPerMinute = value }
        if let value = options.clientTimeout { settings.limits.idleTimeoutSeconds = value }
        if let value = options.requestTimeout { settings.limits.requestTimeoutSeconds = value }
        if let value = options.upstreamTimeout { settings.limits.upstreamTimeout = .seconds(value) }
        if !isLoopback(settings.listenAddress) && settings.apiKey == nil {
            context.logger.warning(
                "listening on \(settings.listenAddress) without --api-key-file: anyone who reaches it can run checks on your account"
            )
        }
        try await ServeRunner.run(
            settings: settings, provider: try servedProvider(options, configuration, settings, context),
            log: { line in
                let bytes = Array((line + "\n").utf8)
                _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            })
        return CommandOutcome()
    }

    /// The provider `--provider` (else `[serve] provider`, else tru.ID) names, with its profile's credentials.
    private static func servedProvider(
        _ options: Options, _ configuration: EffectiveConfiguration, _ settings: ServeSettings,
        _ context: CommandContext
    ) throws -> ServedProvider {
        let name = try options.provider?.rawValue ?? configuration.servedProvider
        switch ServedProviderName(rawValue: name) ?? .truid {
        case .truid:
            let (clientID, clientSecret) = try credentials(configuration, context.environment)
            let endpoint = TruAPIEndpoint(
                baseURL: try configuration.apiBaseURL, clientID: clientID, clientSecret: clientSecret,
                caFile: try configuration.caFile)
            // One upstream connection for each request that may be in flight, kept for the next ones.
            let http = HTTPClient(route: .defaultNetwork, maxConnections: settings.limits.maxRequestsInFlight)
            return .truID(TruAPIClient(endpoint: endpoint, http: http, timeout: settings.limits.upstreamTimeout))
        case .twilio:
            return .silentAuth(name: name, try ProviderClients.twilio(configuration))
        case .vonage:
            return .silentAuth(
                name: name,
                try ProviderClients.vonage(
                    configuration, fallbacks: [], caller: context.caller, warn: { context.logger.warning("\($0)") }))
        case .camara:
            return .camara(try ProviderClients.camara(configuration))
        }
    }

    /// The configured credentials, else the dev-server's TRU_ID_CLIENT_ID / TRU_ID_CLIENT_SECRET.
    private static func credentials(
        _ configuration: EffectiveConfiguration, _ environment: [String: String]
    ) throws -> (String, String) {
        if let configured = try configuration.credentials { return (configured.clientID, configured.clientSecret) }
        if let id = environment["TRU_ID_CLIENT_ID"], let secret = environment["TRU_ID_CLIENT_SECRET"], !id.isEmpty,
            !secret.isEmpty
        {
            return (id, secret)
        }
        return try { () throws(CellpathError) in
            let c = try configuration.requireCredentials(); return (c.clientID, c.clientSecret)
        }()
    }

    /// `ADDRESS:PORT` or `[IPV6]:PORT` with a numeric address.
    static func listenAddress(_ text: String) throws(CellpathError) -> (String, Int) {
        let address: Substring, port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            address = text[text.index(after: text.startIndex) ..< close]
            port = text[close...].dropFirst(2)
            guard text[close...].dropFirst().hasPrefix(":") else { throw invalidListen(text) }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw invalidListen(text) }
            address = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard let number = Int(port), (0 ... 65_535).contains(number), !address.isEmpty,
            address.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" })
        else { throw invalidListen(text) }
        return (String(address), number)
    }

    private static func invalidListen(_ text: String) -> CellpathError {
        CellpathError(
            .usage,
            "invalid --listen \(text.terminalSafe): expected a numeric ADDRESS:PORT, e.g. 127.0.0.1:8080 or [::1]:8080")
    }

    /// Whether `address` is 127.0.0.0/8 or ::1.
    private static func isLoopback(_ address: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr(), loopback6 = in6_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        guard inet_pton(AF_INET6, address, &v6) == 1, inet_pton(AF_INET6, "::1", &loopback6) == 1 else { return false }
        return withUnsafeBytes(of: v6) { Array($0) } == withUnsafeBytes(of: loopback6) { Array($0) }
    }

    /// The warning for a key file that its group or others may read or write, as for tru.json; nil otherwise.
    static func exposedKeyWarning(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, UInt32(info.st_mode) & 0o077 != 0 else { return nil }
        let octal = String(UInt32(info.st_mode) & 0o777, radix: 8)
        return "\(path.terminalSafe) holds the client key but is accessible by its group or others "
            + "(mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal)); run 'chmod 600 \(path.terminalSafe)'"
    }

    /// The first line of a key file; it must be readable and not empty.
    private static func readKey(_ path: String) throws -> String {
        guard let file = fopen(path, "r") else {
            throw CellpathError(.noInput, "cannot read the client key file \(path.terminalSafe)")
        }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else {
            throw CellpathError(.dataError, "the client key file \(path.terminalSafe) is empty")
        }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let key = String(line.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        guard key.count >= 16 else {
            throw CellpathError(.dataError, "the client key in \(path.terminalSafe) is shorter than 16 characters")
        }
        return key
    }
}
