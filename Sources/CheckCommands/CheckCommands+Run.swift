import Bearers
import CAMARA
import CellpathCLI
import CellpathCore
import CellularHTTP
import CommandLineKit
import Configuration
import ModemCommands
import ModemDiscovery
import PhoneNumbers
import ProviderClients
import Synchronization
import SystemSupport
import Workflow

extension ProgramImplementations {
    /// The checks, `sim-swap`, `coverage` and `verify`, which `cellpath-helper` runs (Sources/HelperCommands).
    package static let checkCommands: [CommandImplementation] = [
        .async(CheckCommands.subscriberCheck) { try await CheckCommands.runCheck(.subscriberCheck, $0, $1) },
        .async(CheckCommands.phoneCheck) { try await CheckCommands.runCheck(.phoneCheck, $0, $1) },
        .async(CheckCommands.simCheck, CheckCommands.runSIMCheck),
        .async(SimSwapCommand.spec, SimSwapCommand.run),
        .async(CheckCommands.coverage, CheckCommands.runCoverage),
        .async(VerifyCommand.spec, CheckCommands.runVerify)
    ]
}

extension CheckCommands {
    /// A SIMCheck: once, or `--repeat` times (field mode).
    static func runSIMCheck(_ options: SIMCheckOptions, _ context: CommandContext) async throws -> CommandOutcome {
        let configuration = try ConfigurationOptions.load(options, context)
        let check = try checkOptions(
            apiVersion: options.apiVersion, redirectURL: nil, referenceID: nil,
            command: context.command)
        try checkFieldOptions(options.field, context)
        let backend = try makeBackend(options.backend, configuration, context)
        // Each step in the -v trace too, where it shows what ran beside what.
        let progress: @Sendable (String) -> Void = {
            context.progress.step($0)
            context.logger.info("\($0)")
        }
        let runs = options.field.repeatCount
        let fieldMode = runs > 1 || options.field.entersFieldMode

        let number = try phoneNumber(
            options.phone, .simCheck, regionGiven: options.region != nil, configuration,
            context)
        let runner = CheckRunner(
            backend: backend, pathProvider: NoPath(), checkURLRequest: FetchRequest(url: ""), progress: progress)
        let once: @Sendable () async -> CheckRunReport = {
            await runner.runSIMCheck(phoneNumber: number.e164, options: check)
        }
        guard fieldMode else { return try CheckListing.outcome(await once(), context.global.disclosure) }
        let lane = FieldRun.Lane(modem: nil, once: once, finally: {})
        return try await field(.simCheck, runs, options.field, context).run([lane])
    }

    /// A PhoneCheck or SubscriberCheck: once, or `--repeat` times (field mode), on one modem or
    /// on each (`--modem all`).
    static func runCheck(
        _ product: CheckProduct, _ options: DeviceCheckOptions,
        _ context: CommandContext
    ) async throws -> CommandOutcome {
        try await runDeviceCheck(product, options, context) { configuration in
            CheckTarget(backend: try makeBackend(options.backend, configuration, context), deviceLeg: nil)
        }
    }

    /// What a check with a device leg runs against: the backend, and the provider's device-leg
    /// rules (nil: tru.ID's SDKs', unnamed).
    struct CheckTarget {
        var backend: any CheckBackend
        var deviceLeg: DeviceLegRules?
        /// Whether the provider tells the device's number when none is given (CAMARA's
        /// `device-phone-number`): the SIM's is then not read.
        var tellsNumber = false
    }

    /// A check with a device leg against the `target` made from the configuration: once, or
    /// `--repeat` times (field mode), on one modem or on each (`--modem all`).
    static func runDeviceCheck(
        _ product: CheckProduct, _ options: DeviceCheckOptions, _ context: CommandContext,
        target makeTarget: (EffectiveConfiguration) throws -> CheckTarget
    ) async throws -> CommandOutcome {
        let configuration = try ConfigurationOptions.load(options, context)
        let check = try checkOptions(
            apiVersion: options.apiVersion, redirectURL: options.redirectURL,
            referenceID: options.referenceID, command: context.command)
        try checkFieldOptions(options.field, context)
        let target = try makeTarget(configuration)
        // Each step in the -v trace too, where it shows what ran beside what.
        let progress: @Sendable (String) -> Void = {
            context.progress.step($0)
            context.logger.info("\($0)")
        }
        let runs = options.field.repeatCount
        let fieldMode = runs > 1 || options.field.entersFieldMode

        let request = try checkURLRequest(
            allowDowngrade: options.allowDowngrade, maxHops: options.maxHops,
            configuration)
        let operatorHeader = try options.operatorOverride.map { try OperatorIDs(parsing: $0).headerValue }
        let lanes = try await checkLanes(product, options, configuration, context, numberTold: target.tellsNumber)
        let walksSlots = options.modemPath.simSlot == .all
        // Repeated runs, modems and SIMs of their own keep their bearer, and with it its DNS answers.
        let keepsBearer = fieldMode || lanes.count > 1 || walksSlots
        let prepared = lanes.map { lane in
            let sims = lane.sims.map { sim -> FieldRun.SIM in
                let (slot, known, path): (Int?, String?, any CellularPathProvider)
                switch sim {
                case .skipped(let slot, let reason): return FieldRun.SIM(slot: slot, work: .skipped(reason))
                case .check(let checked, let number, let provider): (slot, known, path) = (checked, number, provider)
                }
                let provider: any CellularPathProvider = keepsBearer ? FieldRunPath(path) : path
                // A SIM whose number was not known before its slot was active: read once its bearer is up.
                let number = SIMNumber(known) {
                    _ = try await provider.cellularPath()
                    return try await lane.ownNumber()
                }
                let noFixToTell = NoFixWarning()
                let runner = CheckRunner(
                    backend: target.backend, pathProvider: provider, checkURLRequest: request,
                    operatorOverride: operatorHeader, dnsCache: keepsBearer ? BearerDNSCache() : nil,
                    deviceLeg: target.deviceLeg, locationBound: options.location ? GNSSFix.readBound : nil,
                    progress: progress)
                return FieldRun.SIM(
                    slot: slot,
                    work: .runs(
                        once: {
                            let report: CheckRunReport
                            do {
                                report = await runner.run(
                                    product, phoneNumber: try await number.value(), options: check)
                            } catch {
                                var failed = CheckRunReport(
                                    product: product, phoneNumber: "", backend: target.backend.name,
                                    apiVersion: check.apiVersion)
                                failed.failure =
                                    error as? CellpathError
                                    ?? CellpathError(.unavailable, "couldn't read the SIM's number: \(error)")
                                report = failed
                            }
                            await (provider as? FieldRunPath)?.runEnded(with: report.failure)
                            warnAboutDowngrades(in: report.checkURL?.trace, context.logger)
                            if let reason = noFixToTell.update(report.location) {
                                let name = lane.modem.map { "modem \($0)" } ?? "the modem"
                                context.logger.warning("--location: no GNSS fix from \(name): \(reason)")
                            }
                            return report
                        },
                        finally: { await (provider as? FieldRunPath)?.releaseAtEnd() }))
            }
            return FieldRun.Lane(
                modem: lanes.count > 1 || walksSlots ? lane.modem : nil, sims: sims, finally: lane.finally)
        }
        guard fieldMode || prepared.count > 1 || walksSlots else {
            guard case .runs(let once, _) = prepared[0].sims[0].work else {
                preconditionFailure("a single check's one SIM is checked")
            }
            let report = await once()
            try Task.checkCancellation()
            return try CheckListing.outcome(report, context.global.disclosure)
        }
        return try await field(product, runs, options.field, context).run(prepared)
    }

    /// The field run of `product`: its records file opened (and read, to resume a run).
    private static func field(
        _ product: CheckProduct, _ runs: Int, _ field: FieldOptions,
        _ context: CommandContext
    ) throws -> FieldRun {
        var recording = FieldRun.Recording(position: field.position)
        if let path = field.recordsFile {
            let (file, resumed) = try FieldRecordsFile.open(
                path, resume: field.resume, disclosure: context.global.disclosure, as: context.caller,
                logger: context.logger)
            recording.file = file
            if let resumed {
                recording.runID = resumed.runID
                recording.lastRun = resumed.lastRun
                context.logger.info("resuming run \(resumed.runID): \(resumed.records) runs recorded in \(path)")
            } else if field.resume {
                context.logger.info("\(path) holds no run to resume: run \(recording.runID) starts")
            }
        }
        return FieldRun(
            product: product, runs: runs, interval: field.interval, metricsFile: field.metricsFile,
            recording: recording, context: context)
    }

    /// A modem to run checks on: its SIMs (one, unless `--sim-slot all`), then `finally`.
    struct CheckLane {
        var modem: Int?
        var sims: [CheckSIM]
        /// The number the modem's active SIM holds, read now, in E.164.
        var ownNumber: @Sendable () async throws -> String = {
            throw CellpathError(.internalError, "a number read from no modem")
        }
        /// After its SIMs: the slot the modem was on made active again (`--sim-slot all`).
        var finally: @Sendable () async -> Void = {}
    }

    /// One SIM of a lane.
    enum CheckSIM {
        /// Checks on the SIM of `slot` (nil: the active one, or `--sim-slot n`'s) through
        /// `provider`'s bearer: of `number` (E.164; nil: the SIM's own, read once its slot is active).
        case check(slot: Int?, number: String?, provider: any CellularPathProvider)
        /// A slot without a SIM that can register (`--sim-slot all`), and why.
        case skipped(slot: Int, reason: String)
    }

    /// The lanes of a check: the interface given (`--interface`), each modem (`--modem all`), or
    /// the chosen modem; with `--sim-slot all`, each of a modem's SIMs in turn. The number is the
    /// one given, else (`numberTold`) the provider's to tell (`NumberVerificationProvider.deviceNumber`),
    /// else the one each SIM holds. A national number without a configured region takes the
    /// region of the SIM's own number.
    static func checkLanes(
        _ product: CheckProduct, _ options: DeviceCheckOptions,
        _ configuration: EffectiveConfiguration, _ context: CommandContext, numberTold: Bool = false
    ) async throws -> [CheckLane] {
        let text = options.phone
        let regionGiven = options.region != nil
        let usesInterface = options.interfacePath.interface != nil
        let walksSlots = options.modemPath.simSlot == .all
        var given: String? = text == nil && numberTold ? NumberVerificationProvider.deviceNumber : nil
        var needsSIMRegion: CellpathError?
        if let text {
            let regionless = try configuration.region == nil && !usesInterface
            do {
                given = try phoneNumber(text, product, regionGiven: regionGiven, configuration, context).e164
            } catch let error as CellpathError where regionless {
                needsSIMRegion = error
            }
        }
        if usesInterface {
            guard let given else {
                throw numberNeededWithInterface(command: context.command)
            }
            let provider = try FetchCommand.pathProvider(options.interfacePath, operatorID: nil, context)
            return [CheckLane(modem: nil, sims: [.check(slot: nil, number: given, provider: provider)])]
        }
        let slot = walksSlots ? nil : try SIMSlotChoice.single(options.modemPath.simSlot, command: context.command)
        let modems: [DiscoveredModem]
        var reports: [ModemReport] = []
        let backend = options.modemPath.backend
        let (discovery, reader) = ModemsCommand.setUp(backend, timeout: nil, context)
        if options.modem == "all" {
            let found = discovery.discover()
            modems = found.modems
            guard !modems.isEmpty else {
                if let first = found.uncontrolled.first { throw ModemListing.cannotDrive(first) }
                throw CellpathError(
                    .unavailable, "no modem found in \(discovery.roots.sysfs)",
                    hint: "cellpath modems lists what cellpath sees")
            }
        } else {
            let choice = try await BearerCommand.chooseModem(
                options.modem, backend,
                timeout: BearerCommand.defaultTimeout, context)
            switch choice {
            case .chosen(let modem, let report):
                modems = [modem]
                if let report { reports = [report] }
            case .refused(let outcome):
                throw CommandStopped(outcome)
            }
        }
        if given == nil || walksSlots, reports.count != modems.count {
            reports = await ModemsCommand.read(modems, with: reader, context)
        }
        return try modems.map { modem in
            let number: String?
            if let given {
                number = given
            } else if let text, let problem = needsSIMRegion {
                number = try numberInSIMRegion(text, problem, modem: modem, in: reports, product, context)
            } else if walksSlots {
                number = nil
            } else {
                number = try ownNumber(
                    of: modem, in: reports, product, regionGiven: regionGiven, configuration, context)
            }
            // The checks' runner confirms the path beside the chain: a bearer up as recorded is started on at once.
            let path = { (slot: Int?) in
                try FetchCommand.modemPath(
                    options.modemPath, options.interfacePath, ipType: nil, context, modem: modem, simSlot: slot,
                    startsOnRecordedBearer: true)
            }
            guard walksSlots else {
                return CheckLane(
                    modem: modem.index, sims: [.check(slot: slot, number: number, provider: try path(slot))])
            }
            var lane = CheckLane(modem: modem.index, sims: [])
            lane.ownNumber = {
                let now = await ModemsCommand.read([modem], with: reader, context)
                return try ownNumber(of: modem, in: now, product, regionGiven: regionGiven, configuration, context)
            }
            let slots = try status(of: modem, in: reports).sim?.slots ?? []
            guard let active = slots.first(where: \.active) else {
                context.logger.warning(
                    "modem \(modem.index) reports no SIM slots (one SIM, or a backend that does not switch them): its active SIM only"
                )
                lane.sims = [.check(slot: nil, number: number, provider: try path(nil))]
                return lane
            }
            lane.sims = try slots.map { slot in
                guard let skipped = slot.skipReason else {
                    // The active SIM's own number is known already.
                    let known =
                        number
                        ?? (slot.active
                            ? try? ownNumber(
                                of: modem, in: reports, product, regionGiven: regionGiven, configuration, context)
                            : nil)
                    return .check(slot: slot.number, number: known, provider: try path(slot.number))
                }
                return .skipped(slot: slot.number, reason: skipped)
            }
            let switcher = try path(nil)
            let logger = context.logger
            lane.finally = {
                do throws(CellpathError) {
                    try await switcher.switchSIMSlot(to: active.number)
                    logger.info("modem \(modem.index): back on SIM slot \(active.number)")
                } catch {
                    logger.error(
                        "modem \(modem.index): couldn't switch back to SIM slot \(active.number): \(error.message)")
                }
            }
            return lane
        }
    }

    /// The number `modem`'s SIM holds (its first MSISDN), in E.164.
    static func ownNumber(
        of modem: DiscoveredModem, in reports: [ModemReport], _ product: CheckProduct,
        regionGiven: Bool, _ configuration: EffectiveConfiguration,
        _ context: CommandContext
    ) throws -> String {
        guard let msisdn = try simNumber(of: modem, in: reports) else {
            throw CellpathError(
                .usage, "modem \(modem.index)'s SIM does not hold its own number (no MSISDN)",
                hint: "give the number to check: cellpath \(product.commandName) +44…")
        }
        return try phoneNumber(msisdn, product, regionGiven: regionGiven, configuration, context).e164
    }

    /// A national number read in the region of `modem`'s SIM (the region of the number it holds);
    /// `problem` (it needs a region) when the SIM holds no number.
    static func numberInSIMRegion(
        _ text: String, _ problem: CellpathError, modem: DiscoveredModem, in reports: [ModemReport],
        _ product: CheckProduct, _ context: CommandContext
    ) throws -> String {
        guard let msisdn = try simNumber(of: modem, in: reports),
            let region = try? PhoneNumber.parse(msisdn, defaultRegion: nil, regionIsExplicit: false).regionCode,
            region != "001"
        else {
            throw problem
        }
        context.logger.info(
            "reading \(text) in \(region), the region of modem \(modem.index)'s SIM (--region sets another)")
        let number = try PhoneNumber.parse(text, defaultRegion: region, regionIsExplicit: false)
        if !number.isMobileCapable {
            context.logger.warning(
                "this is a \(number.type.numberPhrase): \(product.commandName) needs a mobile number")
        }
        return number.e164
    }

    /// The number `modem`'s SIM holds, with its `+`; nil when it holds none.
    static func simNumber(of modem: DiscoveredModem, in reports: [ModemReport]) throws -> String? {
        guard let msisdn = try status(of: modem, in: reports).sim?.msisdns.first, !msisdn.isEmpty else { return nil }
        return msisdn.hasPrefix("+") ? msisdn : "+" + msisdn
    }

    /// `modem`'s status as `reports` read it; its read's failure as unavailable.
    static func status(of modem: DiscoveredModem, in reports: [ModemReport]) throws -> ModemStatus {
        guard let report = reports.first(where: { $0.modem.index == modem.index }) else {
            throw CellpathError(.internalError, "modem \(modem.index) was not read")
        }
        switch report.result {
        case .success(let read): return read
        case .failure(let error):
            throw CellpathError(
                .unavailable, "couldn't read modem \(modem.index)'s SIM: \(error.message)",
                hint: "give the number in international form (+44…) or --region")
        }
    }

    /// The number parsed and normalised (`regionGiven`: `--region` given); a number that cannot
    /// take a check gets a warning.
    static func phoneNumber(
        _ text: String, _ product: CheckProduct, regionGiven: Bool,
        _ configuration: EffectiveConfiguration, _ context: CommandContext
    ) throws -> PhoneNumber {
        let number = try PhoneNumber.parse(text, defaultRegion: try configuration.region, regionIsExplicit: regionGiven)
        if !number.isMobileCapable {
            context.logger.warning(
                "this is a \(number.type.numberPhrase): \(product.commandName) needs a mobile number")
        }
        return number
    }

    /// `coverage`: the network and products the API sees through the cellular path.
    static func runCoverage(_ options: CoverageOptions, _ context: CommandContext) async throws -> CommandOutcome {
        let configuration = try ConfigurationOptions.load(options, context)
        let backend = try makeBackend(options.backend, configuration, context)
        // coverage has no --max-hops: the chain takes fetch's default.
        let request = try checkURLRequest(
            allowDowngrade: options.allowDowngrade,
            maxHops: FetchCommand.maxHops.wrappedValue, configuration)
        let runner = CheckRunner(
            backend: backend, pathProvider: try await pathProvider(options, context),
            checkURLRequest: request, progress: { context.progress.step($0) })
        let report = await runner.coverage()
        try Task.checkCancellation()
        warnAboutDowngrades(in: report.trace, context.logger)
        return CoverageListing.outcome(report, context.global.disclosure)
    }

    /// The backend: the tru.ID API with `--direct`, else the development server of `--server`
    /// or of the configuration's profile.
    static func makeBackend(
        _ options: CheckBackendOptions, _ configuration: EffectiveConfiguration,
        _ context: CommandContext
    ) throws -> any CheckBackend {
        let http = HTTPClient(route: .defaultNetwork)
        let caFile = try ProviderClients.checkedCAFile(configuration)
        if try usesDirectBackend(options, command: context.command) {
            return try directBackend(configuration, http: http, caFile: caFile, context)
        }
        guard let server = try configuration.serverBaseURL else {
            throw CellpathError(
                .configuration,
                "no backend: neither --server nor a server URL for profile '\(try configuration.profile)'",
                hint:
                    "give --server http://localhost:8080 (a tru.ID dev-server or cellpath serve), set [server] in the configuration, or use --direct with tru.ID credentials"
            )
        }
        return DevServerBackend(baseURL: server, http: http, caFile: caFile, timeout: try configuration.timeout)
    }

    /// The cellular path: an interface configured by another tool (`--interface`), else the modem
    /// layer's, of the modem chosen first (several and none named: they are listed, exit 64).
    static func pathProvider(
        _ options: CoverageOptions,
        _ context: CommandContext
    ) async throws -> any CellularPathProvider {
        if options.interfacePath.interface != nil {
            return try FetchCommand.pathProvider(options.interfacePath, operatorID: nil, context)
        }
        let modem = try await FetchCommand.chosenModem(options.modem, options.modemPath.backend, context)
        return try FetchCommand.modemPath(
            options.modemPath, options.interfacePath, ipType: nil, context, modem: modem,
            simSlot: try SIMSlotChoice.single(options.modemPath.simSlot, command: context.command))
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
    static func directBackend(
        _ configuration: EffectiveConfiguration, http: HTTPClient, caFile: String?,
        _ context: CommandContext
    ) throws -> any CheckBackend {
        let credentials = try configuration.requireCredentials()
        let endpoint = TruAPIEndpoint(
            baseURL: try configuration.apiBaseURL, clientID: credentials.clientID,
            clientSecret: credentials.clientSecret, caFile: caFile)
        let client = TruAPIClient(
            endpoint: endpoint, http: http, tokenCache: tokenCache(context.environment),
            timeout: try configuration.timeout)
        return DirectBackend(client: client)
    }

    /// The token cache file: the one `CELLPATH_TOKEN_CACHE` names (a simulated world's) if its
    /// directory exists, else the user's; none for a user whose home (or cache directory's
    /// parent) does not exist: cellpath creates no home directory.
    static func tokenCache(_ environment: [String: String]) -> FileTokenCache? {
        guard let path = FileTokenCache.defaultPath(environment: environment) else { return nil }
        let components = path.split(separator: "/")
        // The named file's own directory; else the parent of the cache directory (cellpath/tokens.json dropped).
        let mustExist =
            FileTokenCache.namedPath(environment: environment) != nil ? components.dropLast() : components.dropLast(3)
        return FileSystem.exists("/" + mustExist.joined(separator: "/")) ? FileTokenCache(path: path) : nil
    }
}

/// Whether a run's missing GNSS fix is worth a warning: the first time a SIM's runs have none,
/// and again only when the reason changes or a fix came in between, not at every run of a field run.
private final class NoFixWarning: Sendable {
    private let lastReason = Mutex<String?>(nil)

    /// The reason to warn about for `reading`, or nil when the last warning said it already.
    func update(_ reading: GNSSReading?) -> String? {
        lastReason.withLock { last in
            guard case .noFix(let reason) = reading else {
                if reading != nil { last = nil }
                return nil
            }
            defer { last = reason }
            return reason == last ? nil : reason
        }
    }
}
