import CellpathCore
import CellularHTTP

/// `cellpath fetch URL`: one HTTP(S) request and its whole redirect chain, DNS included,
/// through the cellular interface only; prints a trace of every hop.
enum FetchCommand {
    static let spec: CommandSpec = CommandSpec(
        name: "fetch",
        abstract: "Fetch a URL (a check_url) and follow its redirect chain through the cellular interface only.",
        discussion: """
            Every hop is sent from a socket bound to the interface (SO_BINDTODEVICE, verified) and to
            the bearer's own address, and every name is resolved with the given DNS servers through
            the same interface. If the path goes away, the fetch fails: it never falls back to
            another network. Redirects (301/302/303/307/308) are followed by cellpath itself, with
            cookies carried across hops; tokens, codes and cookies are masked in the trace unless
            --verbose-full.
            """,
        arguments: [ArgumentSpec(name: "url", help: "Absolute http or https URL of the first hop.")],
        options: [
            .value("interface", short: "i", "name", help: "Cellular network interface (e.g. wwan0); its address is read from it."),
            .value("dns", "address", help: "DNS server of the bearer (repeat or separate with commas).", repeatable: true),
            .value("ip-type", "type", help: "Address family: ipv4, ipv6 or any (default: any).", choices: IPType.allCases.map(\.rawValue)),
            .value("max-hops", "n", help: "Most requests in the chain (default: 10)."),
            ConfigurationOptions.hopTimeout,
            ConfigurationOptions.timeout,
            .value("stop-at", "prefix", help: "Stop at the first redirect whose Location starts with this prefix (a redirect_url)."),
            .flag("strict", help: "Refuse an https→http downgrade instead of only reporting it."),
            .value("method", short: "X", "method", help: "Method of the first request (default: GET)."),
            .value("data", "body", help: "Body of the first request."),
            .value("header", short: "H", "header", help: "Extra request header 'Name: value' (repeatable).", repeatable: true),
            .value("operator", "mcc-mnc", help: "Send the SDKs' x-tru-ops header with this operator (e.g. 001-01)."),
            ConfigurationOptions.caFile,
            .value("har", "file", help: "Also write the trace as HAR 1.2 to this file."),
        ],
        action: .async(run))

    static func run(_ parsed: ParsedCommand, _ context: CommandContext) async throws -> CommandOutcome {
        let request = try makeRequest(parsed, context)
        guard let interface = parsed.value("interface") else {
            throw CellpathError(.unavailable, "no cellular path: give the bearer's interface with --interface and its DNS with --dns",
                                hint: "cellpath never sends a check over the default route")
        }
        let dns = parsed.values("dns").flatMap { $0.split(separator: ",").map(String.init) }
        guard !dns.isEmpty else {
            throw UsageError("missing '--dns <address>': names must be resolved by the bearer's DNS servers", command: parsed.path)
        }
        let path = try InterfacePath.discover(interface: interface, dnsServers: dns, operatorID: parsed.value("operator"))
        context.progress.step("fetching through \(interface)")
        let report = await CellularHTTPClient(path: path).trace(request)
        try Task.checkCancellation()

        let disclosure = context.global.disclosure
        if let har = parsed.value("har") {
            try OutputFile.write(HARWriter.har(report, disclosure: disclosure), to: har)
        }
        let shown = report.redacted(disclosure)
        let output = Output(try ValueEncoder.record(shown), humanLines: report.humanLines(disclosure))
        guard let failure = report.failure else { return CommandOutcome(output) }
        context.logger.error("couldn't fetch: \(failure.message)")
        return CommandOutcome(output, exitCode: ExitCode.forKind(failure.reason.kind))
    }

    /// Builds the request from the options; bad input is refused here, before any packet.
    static func makeRequest(_ parsed: ParsedCommand, _ context: CommandContext) throws -> FetchRequest {
        let configuration = try ConfigurationOptions.load(parsed, context)
        var request = FetchRequest(url: parsed.argument("url")!)
        request.method = parsed.value("method") ?? (parsed.value("data") == nil ? "GET" : "POST")
        request.body = parsed.value("data").map { Array($0.utf8) }
        request.headers = try parsed.values("header").map { text throws(UsageError) in
            guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
                throw UsageError("invalid header '\(text)': expected 'Name: value'", command: parsed.path)
            }
            return HTTPHeader(String(text[..<colon]), String(text[text.index(after: colon)...].drop { $0 == " " }))
        }
        request.maxHops = try parsed.integer("max-hops", in: 1...50) ?? 10
        request.hopTimeout = configuration.hopTimeout
        request.totalTimeout = configuration.timeout
        request.ipType = parsed.value("ip-type").flatMap(IPType.init(rawValue:)) ?? .any
        request.stopAtPrefix = parsed.value("stop-at")
        request.strict = parsed.flag("strict")
        request.caFile = configuration.caFile
        request.sendOperatorHeader = parsed.value("operator") != nil
        do {
            try request.validate()
        } catch {
            throw error.cellpathError
        }
        return request
    }
}
