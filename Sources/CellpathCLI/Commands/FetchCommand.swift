import CellpathCore
import CellularHTTP
import CommandLineKit
import Configuration
import ModemDiscovery
import SystemSupport
import Workflow

/// `cellpath fetch URL`: one HTTP(S) request and its whole redirect chain, DNS included,
/// through the cellular interface only; prints a trace of every hop.
package enum FetchCommand {
    package static let spec: CommandSpec = CommandSpec(
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
        options: Options.self,
        placement: .routing(among: [.front, .modems], by: route),
        examples: [
            .init(
                "Open a check_url through the only modem (its bearer brought up if needed):",
                "cellpath fetch \"$CHECK_URL\""),
            .init(
                "Through an interface another tool configured, with the bearer's DNS:",
                "cellpath fetch -i wwan0 --dns 100.64.0.53 \"$CHECK_URL\""),
            .init("Print only the v0.2 code, for your backend:", "cellpath fetch -m 0 --print code \"$CHECK_URL\"")
        ])

    /// `fetch`'s options: the path (an interface, or a modem's bearer), the request, the output.
    package struct Options: CommandOptions {
        @Argument("url", help: "Absolute http or https URL of the first hop.") package var url: String
        @OptionGroup package var interfacePath: InterfacePathOptions
        @Option(ModemOption.modem) package var modem: String?
        @OptionGroup package var modemPath: ModemPathOptions
        @Option(ConfigurationOptions.ipType) package var ipType: BearerIPType?
        @Option(FetchCommand.maxHops) package var maxHops: Int
        @SettingOption(.hopTimeout) package var hopTimeout: String?
        @SettingOption(.timeout) package var timeout: String?
        @Option(
            "stop-at", "prefix",
            help: "Stop at the first redirect whose Location starts with this prefix (a redirect_url).")
        package var stopAt: String?
        @Flag("strict", help: "Refuse an https→http downgrade instead of only reporting it.") package var strict: Bool
        @Option(
            "method", short: "X", "method",
            help: "Method of the first request (default: GET).") package var method: String?
        @Option("data", "body", help: "Body of the first request.") package var data: String?
        @RepeatableOption("header", short: "H", "header", help: "Extra request header 'Name: value' (repeatable).")
        package var header: [String]
        @Option(
            "operator", "mcc-mnc",
            help: """
                Send the SDKs' x-tru-ops header on the first request: MCC-MNC, several separated by commas (e.g. \
                234-15).
                """)
        package var operatorID: String?
        @SettingOption(.caFile) package var caFile: String?
        @Option("har", "file", help: "Also write the trace as HAR 1.2 to this file.") package var har: String?
        @Option(
            "print", "field",
            help: """
                Print only this field of the result on stdout: code, check-id, reference-id or status (the code is \
                a secret: it is printed as it is).
                """,
            .choice)
        package var printField: PrintField?

        package init() {}
    }

    /// `--max-hops`, also the checks'.
    package static let maxHops = Option<Int>(
        wrappedValue: 10, "max-hops", "n",
        help: "Most requests in the chain (default: 10).", .integer(in: 1 ... 50))

    /// What `--print` prints.
    package enum PrintField: String, Sendable, CaseIterable {
        case code, checkID = "check-id", referenceID = "reference-id", status
    }

    package static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        try await run(options, context) { options, context in
            try pathProvider(options.interfacePath, operatorID: options.operatorID, context)
        }
    }

    /// Refuses an output file (`--har`) that cannot be written, before anything is sent or chosen.
    package static func checkOutputs(_ options: Options, _ context: CommandContext) throws {
        if let har = options.har { try OutputFile.checkWritable(har, option: "--har", as: context.caller) }
    }

    /// The fetch with the path from `pathProvider`: the interface and DNS servers given
    /// (`pathProvider(_:_:)`), or the modem layer's (`cellpath-modem`).
    package static func run(
        _ options: Options, _ context: CommandContext,
        pathProvider: (Options, CommandContext) throws -> any CellularPathProvider
    )
        async throws -> CommandOutcome
    {
        if let operators = options.operatorID { _ = try OperatorIDs(parsing: operators) }
        if options.printField != nil, context.global.json {
            throw UsageError("'--print' cannot be combined with '--json'", command: context.command)
        }
        let request = try makeRequest(options, context)
        try checkOutputs(options, context)
        let provider = try pathProvider(options, context)
        let path = try await provider.cellularPath()
        for address in [path.ipv4Address, path.ipv6Address].compactMap({ $0 })
        where !SourceAddressRule.exists(interface: path.interfaceName, address: address) {
            context.logger.warning(
                "--interface \(path.interfaceName) has no source-address rule for \(address): the kernel's answers for a fetch cancelled at the wrong moment could leave through another network with that address; the modem layer installs one"
            )
        }
        context.progress.step("fetching through \(path.interfaceName)")
        let opener = CheckURLOpener(client: CellularHTTPClient(path: path))
        let report = await opener.open(request, sendOperatorHeader: options.operatorID != nil)
        await provider.release()
        try Task.checkCancellation()

        let disclosure = context.global.disclosure
        logDetails(report.trace.redacted(disclosure), interface: path.interfaceName, context.logger)
        warnAboutDowngrades(in: report.trace, allowedBy: "without --strict", context.logger)
        // The trace is printed even when its HAR copy cannot be written: nothing of the chain is lost.
        var harFailure: CellpathError?
        if let har = options.har {
            do {
                try OutputFile.write(HARWriter.har(report.trace, disclosure: disclosure), to: har, as: context.caller)
            } catch {
                harFailure = error
            }
        }
        if let field = options.printField {
            if !context.global.quiet {
                Terminal.writeErr(report.humanLines(disclosure).map { $0.terminalSafe + "\n" }.joined())
            }
            let printed = try printOnly(field, of: report)
            guard let harFailure, let output = printed.output else { return printed }
            return CommandOutcome(output, failure: CommandFailure(harFailure))
        }
        let output = Output(
            try record(report, disclosure), humanLines: report.humanLines(disclosure, hops: false),
            details: report.trace.hopLines(disclosure))
        if let failure = report.failure {
            if let harFailure { context.logger.error("\(harFailure.message)") }
            return CommandOutcome(
                output, failure: CommandFailure(failure.cellpathError, details: try details(of: failure)))
        }
        if let harFailure { return CommandOutcome(output, failure: CommandFailure(harFailure)) }
        return CommandOutcome(output)
    }

    /// Warns, even with `--quiet`, about each downgraded hop of a chain (`allowedBy`: what let it
    /// through): what it sent went without TLS.
    package static func warnAboutDowngrades(in trace: FetchReport?, allowedBy: String, _ logger: Logger) {
        for hop in trace?.redacted(logger.disclosure).hops ?? [] where hop.downgrade {
            logger.unsuppressibleWarning(
                "hop \(hop.index) downgraded to plain http (\(hop.url)): what it carried went without TLS (\(allowedBy))"
            )
        }
    }

    /// `--print FIELD`: that field alone on stdout; a failure, or a result without it, is an error.
    package static func printOnly(_ field: PrintField, of report: CheckURLReport) throws -> CommandOutcome {
        if let failure = report.failure { throw failure.cellpathError }
        let value: String? =
            switch field {
            case .code: report.callback?.code
            case .checkID: report.callback?.checkID
            case .referenceID: report.callback?.referenceID
            case .status: report.trace.result.map { String($0.finalStatus) }
            }
        guard let value else {
            throw CellpathError(
                .dataError, "the chain ended without a \(field.rawValue): it has no v0.2 callback with one",
                hint: "without --print, the trace shows how the chain ended")
        }
        return CommandOutcome(
            Output(
                Record([Field(key: field.rawValue, label: field.rawValue, value: .string(value))]),
                humanLines: [value]))
    }

    /// `-v`: what each hop did, from the (redacted) trace: the request, DNS, the bound socket, timings.
    package static func logDetails(_ trace: FetchReport, interface: String, _ logger: Logger) {
        guard logger.enabled(.debug) else { return }
        logger.debug(
            "path: \(interface), bound to \(trace.localAddresses.joined(separator: ", ")), DNS \(trace.dnsServers.joined(separator: ", "))"
        )
        for hop in trace.hops {
            let scope = logger.scoped("hop \(hop.index)")
            scope.debug("\(hop.method) \(hop.url) \(hop.httpVersion)")
            for header in hop.requestHeaders { scope.debug("> \(header.name): \(header.value)") }
            if let answers = hop.dnsAnswers {
                let how =
                    switch hop.dnsSource {
                    case .chain: "from the chain's cache"
                    case .bearerCache: "from the bearer's DNS cache (TTL \(hop.dnsTTL ?? 0) s left)"
                    case .network, nil:
                        "in \(hop.timings.dnsMs) ms, asked through \(interface)\(hop.dnsTTL.map { ", TTL \($0) s" } ?? "")"
                    }
                scope.debug("DNS answers \(answers.joined(separator: ", ")) \(how)")
            }
            if !hop.localAddress.isEmpty {
                scope.debug(
                    "socket \(hop.localAddress):\(hop.localPort) → \(hop.remoteAddress):\(hop.remotePort) bound to \(interface) (SO_BINDTODEVICE read back), \(hop.connectionReused ? "reused" : "new")\(hop.tlsVersion.map { ", " + $0 } ?? "")"
                )
            }
            for header in hop.responseHeaders { scope.debug("< \(header.name): \(header.value)") }
            let timings = hop.timings
            scope.debug(
                "status \(hop.status): connect \(timings.connectMs.map { "\($0) ms" } ?? "-"), TLS \(timings.tlsMs.map { "\($0) ms" } ?? "-"), first byte \(timings.firstByteMs) ms, total \(timings.totalMs) ms, \(hop.bodyBytes) body bytes"
            )
        }
    }

    /// The path through the interface and DNS servers given on the command line (`operatorID`:
    /// fetch's `--operator`); the modem layer's is `cellpath-modem`'s.
    package static func pathProvider(
        _ path: InterfacePathOptions, operatorID: String?,
        _ context: CommandContext
    ) throws -> any CellularPathProvider {
        guard let interface = path.interface else {
            throw UsageError(
                "missing '--interface <name>': a check is sent through the bearer's interface only, never the default route",
                command: context.command)
        }
        let dns = path.dnsServers
        guard !dns.isEmpty else {
            throw UsageError(
                "missing '--dns <address>': names must be resolved by the bearer's DNS servers",
                command: context.command)
        }
        if !path.allowAnyInterface { try requireModemInterface(interface, context) }
        return InterfacePathProvider(interface: interface, dnsServers: dns, operatorID: operatorID)
    }

    /// Refuses an interface that is not a modem's (Wi-Fi, Ethernet, a VPN): a check through it
    /// proves nothing about the SIM. A modem's interface or data link (`qmimux0`) and a
    /// router-mode modem's net device are accepted. Discovery reads sysfs (`CELLPATH_SYSFS_ROOT`
    /// in the simulator).
    package static func requireModemInterface(_ interface: String, _ context: CommandContext) throws {
        let discovery = ModemDiscovery(roots: DeviceRoots(environment: context.environment))
        let found = discovery.discover()
        if let router = found.uncontrolled.first(where: { $0.kind == .router && $0.interfaces.contains(interface) }) {
            let model = router.model ?? "USB network"
            context.logger.warning(
                "\(interface) is modem \(router.index)'s, a router-mode modem (\(model)): its SIM, operator and signal cannot be read, so the check runs without them"
            )
        }
        guard !found.isCellularInterface(interface) else { return }
        let modems =
            found.modems.flatMap { modem in
                (modem.interfaces + modem.links).map {
                    "\($0) (\(modem.ports[0].name), \(modem.protocol.rawValue.uppercased()))"
                }
            }
            + found.uncontrolled.filter { $0.kind == .router }.flatMap { modem in
                modem.interfaces.map { "\($0) (router mode, \(modem.driver ?? "USB network"))" }
            }
        let known =
            modems.isEmpty
            ? "no modem was found in \(discovery.roots.sysfs)"
            : "the modems' are " + modems.joined(separator: ", ")
        throw CellpathError(
            .usage, "'\(interface)' is not a modem's network interface: \(known)",
            hint: "a check must leave through the SIM's bearer; to test on another interface, add --allow-any-interface"
        )
    }

    /// The report's fields as docs/json.md lists them: the (redacted) trace, with the callback
    /// in `result` before `stopped_at`, null when there is none. The callback's code is the
    /// code itself: it is what the device hands to the backend.
    package static func record(_ report: CheckURLReport, _ disclosure: Disclosure) throws -> Record {
        var record = try ValueEncoder.record(report.trace.redacted(disclosure))
        record.fields.removeAll { $0.key == "failure" }
        guard let index = record.fields.firstIndex(where: { $0.key == "result" }),
            case .record(var result) = record.fields[index].value
        else { return record }
        let position = result.fields.firstIndex { $0.key == "stopped_at" } ?? result.fields.count
        let callback = try report.callback.map { try ValueEncoder.encode($0) } ?? .null
        result.fields.insert(Field(key: "callback", label: "callback", value: callback), at: position)
        record.fields[index].value = .record(result)
        return record
    }

    /// The JSON error object's fields beyond kind, message, hint and exit code.
    package static func details(of failure: CheckURLFailure) throws -> Record {
        var details = Record()
        details.add("reason", .string(failure.reason))
        details.add("hop", failure.hop.map(Value.int) ?? .null)
        details.add("status", failure.status.map(Value.int) ?? .null)
        details.add("problem", try failure.problem.map { try ValueEncoder.encode($0) } ?? .null)
        details.add("retry_after", .optional(failure.retryAfter))
        return details
    }

    /// Builds the request from the options; bad input is refused here, before any packet.
    package static func makeRequest(_ options: Options, _ context: CommandContext) throws -> FetchRequest {
        let configuration = try ConfigurationOptions.load(options, context)
        var request = FetchRequest(url: options.url)
        request.method = options.method ?? (options.data == nil ? "GET" : "POST")
        request.body = options.data.map { Array($0.utf8) }
        request.headers = try options.header.map { text throws(UsageError) in
            guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
                throw UsageError("invalid header '\(text)': expected 'Name: value'", command: context.command)
            }
            return HTTPHeader(String(text[..<colon]), String(text[text.index(after: colon)...].drop { $0 == " " }))
        }
        request.maxHops = options.maxHops
        request.hopTimeout = try configuration.hopTimeout
        request.totalTimeout = try configuration.timeout
        request.ipType =
            switch try ConfigurationOptions.resolvedIPType(options.ipType, context) {
            case .ipv4: .ipv4
            case .ipv6: .ipv6
            case .ipv4v6: .any
            }
        request.stopAtPrefix = options.stopAt
        request.strict = options.strict
        request.caFile = try configuration.caFile
        if let caFile = request.caFile { try checkCABundle(caFile, origin: configuration.origin(of: "http.cacert")) }
        do {
            try request.validate()
        } catch {
            throw error.cellpathError
        }
        return request
    }

    /// Refuses a CA bundle that cannot be read (66) or holds no PEM certificate (65), before any
    /// packet; the hint names where the bundle was set (`origin`: the flag, a variable, a file).
    package static func checkCABundle(_ path: String, origin: ConfigurationOrigin?) throws(CellpathError) {
        let hint =
            "\(origin.map { "\($0)" } ?? "flag --cacert") names it: a PEM file of CA certificates that this user can read"
        let text: String
        do {
            text = String(decoding: try FileSystem.read(path, limit: 16 << 20), as: UTF8.self)
        } catch {
            throw CellpathError(.noInput, "couldn't read the CA bundle \(path): \(error.reason)", hint: hint)
        }
        guard text.contains("-----BEGIN CERTIFICATE-----") else {
            throw CellpathError(
                .dataError, "the CA bundle \(path) holds no PEM certificate ('-----BEGIN CERTIFICATE-----')", hint: hint
            )
        }
    }
}
