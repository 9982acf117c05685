import CellpathCore
import CellularHTTP

/// Runs checks from the device, as the tutorial's app does but over the cellular path only:
/// the check is created on the backend (default network) while the bearer comes up, its
/// check_url is opened once through the cellular path, and the backend completes it. A bearer
/// this run brought up is released at the end, whatever happened.
public struct CheckRunner: Sendable {
    public var backend: any CheckBackend
    public var pathProvider: any CellularPathProvider
    /// The check_url request's settings (timeouts, hops, CA file, strictness); its URL is the check's.
    public var checkURLRequest: FetchRequest
    /// Sent as `x-tru-ops` instead of the serving network's MCC-MNC (a carrier whose serving
    /// network differs from the SIM's home network).
    public var operatorOverride: String?
    /// How long the first request waits, once its connection is up, for the network the modem
    /// serves on (a path from cellpath's record); past it, the path's network is sent.
    static let servingNetworkWait = Duration.seconds(2)
    /// Called with each step as it starts (for a progress line).
    public var progress: @Sendable (String) -> Void
    /// DNS answers kept across the runs on one bearer (field mode); nil: each run asks anew.
    public var dnsCache: BearerDNSCache?
    /// A provider's device-leg rules, named in the report; nil: tru.ID's SDKs' rules, unnamed
    /// (the tru.ID check commands).
    public var deviceLeg: DeviceLegRules?
    /// How long a GNSS fix is waited for beside the check_url chain (`--location`); nil: none is read.
    public var locationBound: Duration?

    public init(
        backend: any CheckBackend, pathProvider: any CellularPathProvider, checkURLRequest: FetchRequest,
        operatorOverride: String? = nil, dnsCache: BearerDNSCache? = nil, deviceLeg: DeviceLegRules? = nil,
        locationBound: Duration? = nil, progress: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.backend = backend
        self.pathProvider = pathProvider
        self.checkURLRequest = checkURLRequest
        self.operatorOverride = operatorOverride
        self.dnsCache = dnsCache
        self.deviceLeg = deviceLeg
        self.locationBound = locationBound
        self.progress = progress
    }

    /// A PhoneCheck or SubscriberCheck of `phoneNumber` (E.164). Never throws: the report holds
    /// the failure. Cancelling the task stops the run and releases the bearer.
    public func run(_ product: CheckProduct, phoneNumber: String, options: CheckOptions) async -> CheckRunReport {
        var report = CheckRunReport(
            product: product, phoneNumber: phoneNumber, backend: backend.name, apiVersion: options.apiVersion)
        let clock = StepClock()
        do {
            try await steps(product, phoneNumber: phoneNumber, options: options, clock: clock, report: &report)
        } catch {
            report.failure = Self.failure(error)
        }
        await pathProvider.release()
        report.totalMs = clock.now()
        return report
    }

    /// The steps of `run`.
    private func steps(
        _ product: CheckProduct, phoneNumber: String, options: CheckOptions, clock: StepClock,
        report: inout CheckRunReport
    ) async throws {
        progress("creating the check and bringing the cellular path up")
        let (created, path) = try await createWhilePathComesUp(
            product, phoneNumber: phoneNumber, options: options, clock: clock, report: &report)
        // The check's TTL runs from its creation: the create call's start, to be safe.
        let createdAt = report.steps.first { $0.step == "create" }?.startMs ?? 0
        report.checkID = created.checkID
        report.path = path
        if let ttl = created.ttl, clock.now() - createdAt > Double(ttl) * 1000 {
            throw CellpathError(
                .dataError,
                "the check expired (TTL \(ttl) s) before the cellular path was up; its check_url was not opened",
                hint:
                    "the bearer took \(Int((report.duration(of: "path") ?? 0) / 1000)) s to come up: bring it up first (cellpath bearer up) and check again"
            )
        }

        progress("opening check_url through \(path.interfaceName)")
        let start = clock.now()
        let rules = deviceLeg ?? .truID
        var request = rules.applied(to: checkURLRequest)
        request.url = created.checkURL
        let operatorID = rules.sendsOperatorHeader ? operatorOverride ?? path.operatorID : nil
        report.deviceLeg = deviceLeg?.name
        var openerPath = path
        openerPath.operatorID = operatorID
        // Without an override, x-tru-ops names the network at check time: the modem's answer
        // beside a path from cellpath's record, waited for just before the first request is written.
        let liveOperatorID =
            rules.sendsOperatorHeader && operatorOverride == nil
            ? ServingNetworkAnswer(asking: pathProvider).waiting(atMost: Self.servingNetworkWait) : nil
        // The radio and the position are read while the chain runs, so that they are the chain's
        // and cost no time (the position at most its bound past the chain's end).
        async let radio = pathProvider.radioContext()
        async let location = gnssFix()
        let opener = CheckURLOpener(client: CellularHTTPClient(path: openerPath, dnsCache: dnsCache))
        let (opened, lost) = await openWhilePathIsConfirmed { [request] in
            await opener.open(
                request, sendOperatorHeader: rules.sendsOperatorHeader, liveOperatorID: liveOperatorID,
                ending: rules.ending, checkID: created.checkID)
        }
        report.checkURL = opened
        report.operatorSent = opened.operatorSent
        report.radio = await radio
        report.steps.append(clock.timing("check_url", since: start, succeeded: opened.failure == nil && lost == nil))
        // A fix still coming is waited for (at most its bound), outside the check_url step's time.
        report.location = await location
        try Task.checkCancellation()
        if let lost { throw lost }
        if let failure = opened.failure, !(rules.errorEndingIsVerdict && opened.callback?.error != nil) {
            report.checkURLFailure = failure
            throw failure.cellpathError
        }

        progress("completing the check")
        let verdict = try await step("complete", clock: clock, report: &report) { () async throws(CellpathError) in
            try await complete(
                product, created: created, callback: options.apiVersion == .v0_2 ? opened.callback : nil,
                ttlEndsMs: created.ttl.map { createdAt + Double($0) * 1000 }, clock: clock)
        }
        report.verdict = verdict
        if let told = verdict.devicePhoneNumber { report.phoneNumber = told }
        report.outcome = try CheckOutcome(product, verdict: verdict)
    }

    /// The GNSS fix, when one is asked for (`locationBound`).
    private func gnssFix() async -> GNSSReading? {
        guard let locationBound else { return nil }
        return await pathProvider.gnssFix(within: locationBound)
    }

    /// A SIMCheck: one backend call, no device leg (and no bearer).
    public func runSIMCheck(phoneNumber: String, options: CheckOptions) async -> CheckRunReport {
        var report = CheckRunReport(
            product: .simCheck, phoneNumber: phoneNumber, backend: backend.name, apiVersion: .v0_1)
        let clock = StepClock()
        let backend = backend
        progress("running the SIMCheck")
        do {
            let verdict = try await step("sim_check", clock: clock, report: &report) { () async throws(CellpathError) in
                try await backend.simCheck(phoneNumber: phoneNumber, options: options)
            }
            report.checkID = verdict.checkID
            report.verdict = verdict
            report.outcome = try CheckOutcome(.simCheck, verdict: verdict)
        } catch {
            report.failure = Self.failure(error)
        }
        report.totalMs = clock.now()
        return report
    }

    /// The failure to report for `error`: cancellation wins over what it caused.
    private static func failure(_ error: any Error) -> CellpathError {
        if Task.isCancelled { return CellpathError(.cancelled, "cancelled") }
        return error as? CellpathError ?? CellpathError(.cancelled, "cancelled")
    }

    /// Creates the check on the backend while the cellular path comes up; when either fails the
    /// other is cancelled (the path provider undoes what it started).
    private func createWhilePathComesUp(
        _ product: CheckProduct, phoneNumber: String, options: CheckOptions, clock: StepClock,
        report: inout CheckRunReport
    ) async throws -> (CreatedCheckHandle, CellularPath) {
        enum Done: Sendable {
            case created(Result<CreatedCheckHandle, CellpathError>, CheckStepTiming)
            case path(Result<CellularPath, CellpathError>, CheckStepTiming)
        }
        let backend = backend, pathProvider = pathProvider
        return try await withThrowingTaskGroup(of: Done.self) { group in
            group.addTask {
                let start = clock.now()
                let result = await Self.capture { () async throws(CellpathError) in
                    try await backend.create(product, phoneNumber: phoneNumber, options: options)
                }
                return .created(result, clock.timing("create", since: start, succeeded: (try? result.get()) != nil))
            }
            group.addTask {
                let start = clock.now()
                let result = await Self.capture { () async throws(CellpathError) in
                    try await pathProvider.cellularPath()
                }
                return .path(result, clock.timing("path", since: start, succeeded: (try? result.get()) != nil))
            }
            var created: CreatedCheckHandle?, path: CellularPath?
            for try await done in group {
                switch done {
                case .created(let result, let timing):
                    report.steps.append(timing)
                    do { created = try result.get() } catch { group.cancelAll(); throw error }
                case .path(let result, let timing):
                    report.steps.append(timing)
                    do { path = try result.get() } catch { group.cancelAll(); throw error }
                }
            }
            try Task.checkCancellation()
            return (created!, path!)
        }
    }

    /// Opens check_url (`open`) while the path provider confirms a path it gave without asking
    /// the modem; when the modem says the path is gone, the chain is cancelled and the
    /// confirmation's error is the run's.
    private func openWhilePathIsConfirmed(
        _ open: @escaping @Sendable () async -> CheckURLReport
    ) async -> (CheckURLReport, CellpathError?) {
        enum Done: Sendable {
            case opened(CheckURLReport)
            case confirmed(CellpathError?)
        }
        let pathProvider = pathProvider
        return await withTaskGroup(of: Done.self) { group in
            group.addTask { .opened(await open()) }
            group.addTask {
                do throws(CellpathError) {
                    try await pathProvider.confirmPath()
                    return .confirmed(nil)
                } catch {
                    return .confirmed(error)
                }
            }
            var opened: CheckURLReport?, lost: CellpathError?
            for await done in group {
                switch done {
                case .opened(let report): opened = report
                case .confirmed(let error):
                    lost = error
                    if error != nil { group.cancelAll() }
                }
            }
            return (opened!, lost)
        }
    }

    /// Completes the check: exchanges the v0.2 code, or reads the v0.1 result, reading again
    /// (bounded, within the TTL) while the backend still reports it PENDING.
    private func complete(
        _ product: CheckProduct, created: CreatedCheckHandle, callback: CheckCallback?, ttlEndsMs: Double?,
        clock: StepClock
    ) async throws(CellpathError) -> CheckVerdict {
        var verdict = try await backend.complete(product, check: created, callback: callback)
        var reads = 1
        while callback == nil, ["ACCEPTED", "PENDING"].contains(verdict.status?.uppercased() ?? ""), reads < 5,
            ttlEndsMs.map({ clock.now() < $0 }) ?? true
        {
            do { try await Task.sleep(for: .milliseconds(100 * reads)) } catch {
                throw CellpathError(.cancelled, "cancelled")
            }
            verdict = try await backend.complete(product, check: created, callback: nil)
            reads += 1
        }
        return verdict
    }

    /// Runs one step and records its timing.
    private func step<T>(
        _ name: String, clock: StepClock, report: inout CheckRunReport,
        _ work: () async throws(CellpathError) -> T
    ) async throws(CellpathError) -> T {
        let start = clock.now()
        do {
            let value = try await work()
            report.steps.append(clock.timing(name, since: start, succeeded: true))
            return value
        } catch {
            report.steps.append(clock.timing(name, since: start, succeeded: false))
            throw error
        }
    }

    private static func capture<T>(_ work: () async throws(CellpathError) -> T) async -> Result<T, CellpathError> {
        do { return .success(try await work()) } catch { return .failure(error) }
    }
}
