import Bearers
import CellpathCLI
import CellpathCore
import CommandLineKit
import IPConfiguration
import ModemDiscovery
import Modems
import SystemSupport

extension BearerCommand {
    /// The time limit `--timeout` gives.
    package static func timeLimit(_ seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// The time limit of a bearer brought up by a command without a bearer `--timeout` of its own
    /// (`fetch`, the checks: their `--timeout` is the chain's): the bearer commands' default.
    package static var defaultTimeout: Double { Options().timeout }

    /// How the bearer commands reach the modem: through the proxy unless --no-proxy, within
    /// `timeout` (a bearer command's --timeout).
    package static func access(_ backend: ModemBackendOptions, timeout: Double) -> ModemAccess {
        ModemAccess(useProxy: !backend.noProxy, timeout: timeLimit(timeout))
    }

    /// The modem that `name` (-m) names, or the only one; a refusal is the modems' list and exit 64.
    package static func chooseModem(
        _ name: String?, _ backend: ModemBackendOptions, timeout: Double,
        _ context: CommandContext
    ) async throws -> ModemSelection.Choice {
        let selector = try ModemSelector.named(name, command: context.command)
        ModemLibraries.configure(logger: context.logger)
        let discovery = ModemDiscovery(roots: ModemsCommand.deviceRoots(context))
        let reader = ModemStatusReader(
            access: access(backend, timeout: timeout), logger: context.logger,
            opener: backend.choice.opener)
        let found = discovery.discover()
        return try await ModemSelection.choose(
            selector, among: found.modems, roots: discovery.roots,
            uncontrolled: found.uncontrolled,
            disclosure: context.global.disclosure,
            read: { await ModemsCommand.read($0, with: reader, context) })
    }

    /// Opens `modem`'s control port for a bearer command.
    static func open(
        _ modem: DiscoveredModem, _ options: Options, _ logger: Logger
    ) async throws(CellpathError) -> any ModemBackend {
        do {
            let access = access(options.backend, timeout: options.timeout)
            return try await options.backend.choice.opener(modem.ports[0], access, logger)
        } catch {
            throw cellpathError(error)
        }
    }

    /// A modem error as the command reports it (a cancel is exit 130).
    static func cellpathError(_ error: ModemError) -> CellpathError {
        error.kind == .cancelled ? CellpathError(.cancelled, "cancelled") : error.cellpathError
    }

    /// The outcome of `body` as a value.
    static func attempt<Value>(_ body: () async throws(CellpathError) -> Value) async -> Result<Value, CellpathError> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// The modem the bearer command names (or the only one).
    static func chooseModem(_ options: Options, _ context: CommandContext) async throws -> ModemSelection.Choice {
        try await chooseModem(options.modem, options.backend, timeout: options.timeout, context)
    }

    /// Runs `body` with the backend and closes it (releasing what it holds) whatever happens;
    /// a modem error becomes the command's error.
    static func withBackend<Value>(
        _ backend: any ModemBackend,
        _ body: () async throws -> Value
    ) async throws -> Value {
        let result: Result<Value, any Error>
        do {
            result = .success(try await body())
        } catch let error as ModemError {
            result = .failure(cellpathError(error))
        } catch {
            result = .failure(error)
        }
        await backend.close()
        return try result.get()
    }
}

extension BearerUpCommand {
    /// Where the password comes from when no --password-file is given.
    package static let passwordVariable = "CELLPATH_BEARER_PASSWORD"

    /// The bearer's settings from the options; reads the password.
    package static func settings(_ options: Options, _ context: CommandContext) throws -> BearerSettings {
        let addressing = try ConfigurationOptions.bearerAddressing(apn: options.apn, ipType: options.ipType, context)
        var password: String?
        if let file = options.passwordFile {
            password = try secret(file, what: "the password file", as: context.caller)
        } else if let value = context.environment[passwordVariable], !value.isEmpty {
            password = value
        }
        let authentication = options.auth ?? (options.user == nil && password == nil ? .none : .chap)
        if authentication != .none && options.user == nil && password == nil {
            throw UsageError(
                "'--auth \(authentication.rawValue)' needs '--user' (and a password)",
                command: context.command)
        }
        return BearerSettings(
            apn: addressing.apn, ipType: addressing.ipType,
            authentication: authentication, user: options.user, password: password)
    }

    /// The PIN from `--pin-file`, if given: 4 to 8 digits.
    package static func pin(_ options: Options, _ context: CommandContext) throws -> String? {
        guard let file = options.pinFile else { return nil }
        let pin = try secret(file, what: "the PIN file", as: context.caller)
        guard (4 ... 8).contains(pin.count), pin.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw CellpathError(.dataError, "the PIN file \(file) does not hold a PIN (4 to 8 digits)")
        }
        return pin
    }

    /// The first line of a small file (a secret), without its line end, read with `caller`'s
    /// rights (`CommandContext.caller`).
    package static func secret(_ file: String, what: String, as caller: FileIdentity?) throws -> String {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.read(file, limit: 4096, as: caller)
        } catch {
            throw CellpathError(.noInput, "couldn't read \(what) \(file): \(error.reason)")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters { $0 == "\r" || $0 == " " }
    }

    static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        let slot = try SIMSlotChoice.single(options.simSlot, command: context.command)
        let settings = try settings(options, context)
        let pin = try pin(options, context)
        let deadline = ContinuousClock.now + BearerCommand.timeLimit(options.bearer.timeout)
        let modem: DiscoveredModem
        switch try await BearerCommand.chooseModem(options.bearer, context) {
        case .refused(let outcome): return outcome
        case .chosen(let chosen, _): modem = chosen
        }
        let logger = context.logger.scoped("modem\(modem.index)")
        let backend = try await BearerCommand.open(modem, options.bearer, logger)
        let outcome = try await BearerCommand.withBackend(backend) {
            let bringUp = BearerBringUp(
                modem: modem, records: BearerRecords(environment: context.environment), logger: logger,
                progress: { context.progress.step("modem \(modem.index): \($0)") })
            await bringUp.plan(settings, on: backend)
            let follower = IndicationFollower(try await backend.indications()) { indication in
                logger.debug("indication: \(indication)")
            }
            let request = BearerRequest(
                settings: settings, pin: pin, deadline: deadline, use: .keep,
                lockWait: ModemOption.lockWait(options.bearer.wait), simSlot: slot)
            return try await bringUp.run(request, on: backend, following: follower)
        }
        var report = BearerReport(modem: modem, state: .connected)
        report.backend = backend.backendName.rawValue
        report.interface = outcome.path.interfaceName
        report.apn = outcome.record.apn
        report.address = outcome.path.ipv4Address
        report.gateway = outcome.path.ipv4Address == nil ? nil : outcome.bearer.gateway
        report.ipv6Address = outcome.path.ipv6Address
        report.ipv6PrefixLength = outcome.path.ipv6PrefixLength
        report.ipv6Gateway = outcome.path.ipv6Gateway
        report.dnsServers = outcome.path.dnsServers
        report.mtu = outcome.path.mtu
        report.servingOperator = outcome.registration.servingOperator
        report.registration = outcome.registration.state
        report.broughtUpByCellpath = outcome.record.connectedByCellpath
        report.reused = outcome.reused
        report.since = outcome.record.since
        if let counters = InterfaceState.byteCounters(outcome.path.interfaceName) {
            (report.bytesReceived, report.bytesSent) = (counters.received, counters.sent)
        }
        let how = outcome.reused ? "reused" : "up"
        return CommandOutcome(
            BearerListing.output(
                report,
                title:
                    "modem \(modem.index): bearer \(how) on \(outcome.path.interfaceName) (\([outcome.path.ipv4Address, outcome.path.ipv6Address].compactMap { $0 }.joined(separator: ", ")))"
            ))
    }
}

extension BearerDownCommand {
    static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        let modem: DiscoveredModem
        switch try await BearerCommand.chooseModem(options.bearer, context) {
        case .refused(let outcome): return outcome
        case .chosen(let chosen, _): modem = chosen
        }
        let logger = context.logger.scoped("modem\(modem.index)")
        let records = BearerRecords(environment: context.environment)
        let teardown = BearerTeardown(modem: modem, records: records, logger: logger)
        context.progress.step("modem \(modem.index): taking the bearer down")
        var backend: (any ModemBackend)?
        let open = { () async throws(CellpathError) in try await BearerCommand.open(modem, options.bearer, logger) }
        switch await BearerCommand.attempt(open) {
        case .success(let opened):
            backend = opened
        case .failure(let error) where error.kind == .unavailable:
            guard try records.load(for: modem) != nil else { throw error }
            // The modem is gone (and its bearer with it): what is left is cellpath's configuration.
            logger.warning("\(error.message): removing cellpath's configuration of the interface only")
            backend = nil
        case .failure(let error):
            throw error
        }
        // A record the modem left under the device path it had before it re-enumerated is taken by its IMEI.
        if let backend { _ = try await records.load(for: modem, reading: backend) }
        let force = options.force
        let takeDown = { () async throws -> (bearer: BearerTeardown.Result, removedConfiguration: Bool) in
            let lock = try await ModemLock.acquire(
                modem, in: records, purpose: "bearer down",
                wait: ModemOption.lockWait(options.bearer.wait)
            ) { holder in
                logger.warning("waiting for \(holder) to finish with modem \(modem.index)'s bearer")
            }
            defer { lock.release() }
            return try await teardown.run(force: force, on: backend)
        }
        let (result, removed) =
            if let backend {
                try await BearerCommand.withBackend(backend) { try await takeDown() }
            } else {
                try await takeDown()
            }
        return CommandOutcome(
            BearerListing.down(modem, result, removedConfiguration: removed, backend: backend?.backendName.rawValue))
    }
}

extension BearerStatusCommand {
    static func run(_ options: Options, _ context: CommandContext) async throws -> CommandOutcome {
        let modem: DiscoveredModem
        switch try await BearerCommand.chooseModem(options.bearer, context) {
        case .refused(let outcome): return outcome
        case .chosen(let chosen, _): modem = chosen
        }
        let logger = context.logger.scoped("modem\(modem.index)")
        let records = BearerRecords(environment: context.environment)
        let backend = try await BearerCommand.open(modem, options.bearer, logger)
        return try await BearerCommand.withBackend(backend) {
            guard options.watch else {
                return CommandOutcome(BearerListing.output(try await report(modem, backend, records, logger)))
            }
            return try await follow(modem, backend, records, logger, json: context.global.json)
        }
    }

    /// How often `--watch` reads the modem again when its indications do not tell every change
    /// (a QMI call's go to the client that started it: cellpath's own calls are followed, until
    /// they end; another program's are not).
    static let watchInterval = Duration.seconds(5)

    /// `--watch`: prints the status, then again whenever it changes, until cancelled (exit 0).
    static func follow(
        _ modem: DiscoveredModem, _ backend: any ModemBackend, _ records: BearerRecords, _ logger: Logger,
        json: Bool
    ) async throws -> CommandOutcome {
        let follower = IndicationFollower(try await backend.indications()) { logger.debug("indication: \($0)") }
        let record = try records.load(for: modem)
        let following = await backend.followBearer(record?.connectedByCellpath == true ? record?.handle : nil)
        var shown: BearerReport?
        while !Task.isCancelled {
            let seen = follower.count
            await backend.renewTimeLimit()
            let read = await BearerCommand.attempt { () async throws(CellpathError) in
                try await report(modem, backend, records, logger)
            }
            if case .failure(let error) = read, error.kind == .cancelled { break }
            let current = try read.get()
            if current.withoutCounters != shown?.withoutCounters {
                Terminal.writeOut(BearerListing.watchLine(current, json: json))
                shown = current
            }
            let told = following == .everyChange || (following == .untilDown && current.state == .connected)
            await follower.waitForIndication(
                after: seen, until: told ? .now + .seconds(86_400 * 365) : .now + watchInterval)
        }
        return CommandOutcome()
    }

    /// The bearer as the modem, the record and the kernel tell it.
    static func report(
        _ modem: DiscoveredModem, _ backend: any ModemBackend, _ records: BearerRecords,
        _ logger: Logger
    ) async throws(CellpathError) -> BearerReport {
        let bearer: BearerStatus
        let registration: Registration
        let record = try await records.load(for: modem, reading: backend)
        if record?.hasIPv6 == true { await backend.expect(.ipv6) }
        do {
            bearer = try await backend.bearer()
            registration = try await backend.registration()
        } catch {
            throw BearerCommand.cellpathError(error)
        }
        var report = BearerReport(modem: modem, state: bearer.state)
        report.backend = backend.backendName.rawValue
        report.apn = bearer.apn ?? record?.apn
        report.address = bearer.ipv4Address
        report.gateway = bearer.gateway
        report.ipv6Address = bearer.ipv6Address
        report.ipv6PrefixLength = bearer.ipv6PrefixLength
        report.ipv6Gateway = bearer.ipv6Gateway
        report.dnsServers = bearer.dnsServers
        report.mtu = bearer.mtu
        report.servingOperator = registration.servingOperator
        report.registration = registration.state
        if bearer.state == .connected {
            report.broughtUpByCellpath = record?.connectedByCellpath
            report.since = record?.since
            report.interface = BearerInterface.carrying(bearer, of: modem, record: record) ?? report.interface
            if let interface = report.interface, let counters = InterfaceState.byteCounters(interface) {
                (report.bytesReceived, report.bytesSent) = (counters.received, counters.sent)
            }
        }
        return report
    }
}

extension BearerReport {
    /// The report without what changes all the time (counters), to tell real changes.
    var withoutCounters: BearerReport {
        var copy = self
        copy.bytesReceived = nil
        copy.bytesSent = nil
        return copy
    }
}

extension String {
    /// The text without leading and trailing characters that match `trimmed`.
    func trimmingCharacters(_ trimmed: (Character) -> Bool) -> String {
        String(drop(while: trimmed).reversed().drop(while: trimmed).reversed())
    }
}
