import CellpathCore
import CellularHTTP
import Workflow

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
        arguments: [url.spec],
        options: [
            interface.spec, dns.spec, ipType.spec, maxHops.spec,
            ConfigurationOptions.hopTimeout.spec,
            ConfigurationOptions.timeout.spec,
            stopAt.spec, strict.spec, method.spec, data.spec, header.spec, operatorID.spec,
            ConfigurationOptions.caFile.spec,
            har.spec,
        ],
        action: .async(run))

    static let url = ArgumentKey("url", help: "Absolute http or https URL of the first hop.")
    static let interface = OptionKey<String>(
        "interface", short: "i", "name", help: "Cellular network interface (e.g. wwan0); its address is read from it.")
    static let dns = RepeatableOptionKey<String>("dns", "address", help: "DNS server of the bearer (repeat or separate with commas).")
    static let ipType = OptionKey<IPType>("ip-type", "type", help: "Address family: ipv4, ipv6 or any (default: any).", .choice)
    static let maxHops = OptionKey<Int>("max-hops", "n", help: "Most requests in the chain (default: 10).", .integer(in: 1...50))
    static let stopAt = OptionKey<String>(
        "stop-at", "prefix", help: "Stop at the first redirect whose Location starts with this prefix (a redirect_url).")
    static let strict = Flag("strict", help: "Refuse an https→http downgrade instead of only reporting it.")
    static let method = OptionKey<String>("method", short: "X", "method", help: "Method of the first request (default: GET).")
    static let data = OptionKey<String>("data", "body", help: "Body of the first request.")
    static let header = RepeatableOptionKey<String>(
        "header", short: "H", "header", help: "Extra request header 'Name: value' (repeatable).")
    static let operatorID = OptionKey<String>(
        "operator", "mcc-mnc",
        help: "Send the SDKs' x-tru-ops header on the first request: MCC-MNC, several separated by commas (e.g. 234-15).")
    static let har = OptionKey<String>("har", "file", help: "Also write the trace as HAR 1.2 to this file.")

    static func run(_ parsed: ParsedCommand, _ context: CommandContext) async throws -> CommandOutcome {
        if let operators = parsed[Self.operatorID] { _ = try OperatorIDs(parsing: operators) }
        let request = try makeRequest(parsed, context)
        let provider = try pathProvider(parsed)
        let path = try await provider.cellularPath()
        for address in [path.ipv4Address, path.ipv6Address].compactMap({ $0 })
        where !SourceAddressRule.exists(interface: path.interfaceName, address: address) {
            context.logger.warning("--interface \(path.interfaceName) has no source-address rule for \(address): the kernel's answers for a fetch cancelled at the wrong moment could leave through another network with that address; the modem layer installs one")
        }
        context.progress.step("fetching through \(path.interfaceName)")
        let opener = CheckURLOpener(client: CellularHTTPClient(path: path))
        let report = await opener.open(request, sendOperatorHeader: parsed[Self.operatorID] != nil)
        await provider.release()
        try Task.checkCancellation()

        let disclosure = context.global.disclosure
        if let har = parsed[Self.har] {
            try OutputFile.write(HARWriter.har(report.trace, disclosure: disclosure), to: har)
        }
        let output = Output(try record(report.redacted(disclosure)), humanLines: report.humanLines(disclosure))
        guard let failure = report.trace.failure else { return CommandOutcome(output) }
        context.logger.error("couldn't fetch: \(failure.message)")
        return CommandOutcome(output, exitCode: ExitCode.forKind(failure.reason.kind))
    }

    /// Where the cellular path comes from: today the interface and DNS servers given on the
    /// command line (the modem layer will provide its own).
    static func pathProvider(_ parsed: ParsedCommand) throws -> any CellularPathProvider {
        guard let interface = parsed[Self.interface] else {
            throw CellpathError(.unavailable, "no cellular path: give the bearer's interface with --interface and its DNS with --dns",
                                hint: "cellpath never sends a check over the default route")
        }
        let dns = parsed[Self.dns].flatMap { $0.split(separator: ",").map(String.init) }
        guard !dns.isEmpty else {
            throw UsageError("missing '--dns <address>': names must be resolved by the bearer's DNS servers", command: parsed.path)
        }
        return InterfacePathProvider(interface: interface, dnsServers: dns, operatorID: parsed[Self.operatorID])
    }

    /// The report's fields as docs/json.md lists them: the trace, with the recognised callback
    /// in `result` before `stopped_at`.
    static func record(_ report: CheckURLReport) throws -> Record {
        var record = try ValueEncoder.record(report.trace)
        guard let callback = report.callback, let index = record.fields.firstIndex(where: { $0.key == "result" }),
              case .record(var result) = record.fields[index].value else { return record }
        let position = result.fields.firstIndex { $0.key == "stopped_at" } ?? result.fields.count
        result.fields.insert(Field(key: "callback", label: "callback", value: try ValueEncoder.encode(callback)), at: position)
        record.fields[index].value = .record(result)
        return record
    }

    /// Builds the request from the options; bad input is refused here, before any packet.
    static func makeRequest(_ parsed: ParsedCommand, _ context: CommandContext) throws -> FetchRequest {
        let configuration = try ConfigurationOptions.load(parsed, context)
        var request = FetchRequest(url: try parsed[Self.url])
        request.method = parsed[Self.method] ?? (parsed[Self.data] == nil ? "GET" : "POST")
        request.body = parsed[Self.data].map { Array($0.utf8) }
        request.headers = try parsed[Self.header].map { text throws(UsageError) in
            guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
                throw UsageError("invalid header '\(text)': expected 'Name: value'", command: parsed.path)
            }
            return HTTPHeader(String(text[..<colon]), String(text[text.index(after: colon)...].drop { $0 == " " }))
        }
        request.maxHops = parsed[Self.maxHops] ?? 10
        request.hopTimeout = configuration.hopTimeout
        request.totalTimeout = configuration.timeout
        request.ipType = parsed[Self.ipType] ?? .any
        request.stopAtPrefix = parsed[Self.stopAt]
        request.strict = parsed[Self.strict]
        request.caFile = configuration.caFile
        do {
            try request.validate()
        } catch {
            throw error.cellpathError
        }
        return request
    }
}
