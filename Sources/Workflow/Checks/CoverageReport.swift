import CellpathCore
import CellularHTTP

/// What `coverage` found: the network the API saw the device on (through the cellular path)
/// and the products it supports there.
public struct CoverageReport: Sendable {
    public var backend: String
    public var steps: [CheckStepTiming] = []
    public var path: CellularPath?
    /// The API's answer (`network_id`, `network_name`, `country_code`, `mobile_data_ip`, `products`).
    public var coverage: JSONValue?
    /// The request through the cellular path.
    public var trace: FetchReport?
    public var failure: CellpathError?
    public var totalMs: Double = 0

    public init(backend: String) {
        self.backend = backend
    }

    /// The products the answer lists, by `product_id` (e.g. `SCK`, `PCK`, `SUK`) and name.
    public var products: [(id: String, name: String)] {
        (coverage?["products"]?.arrayValue ?? []).compactMap { item in
            guard let id = item[string: "product_id"] else { return nil }
            return (id, item[string: "product_name"] ?? id)
        }
    }
}

extension CheckRunner {
    /// Asks the API, through the cellular path, which network the device is on and which checks
    /// its operator supports. The token comes from the backend over the default network.
    public func coverage() async -> CoverageReport {
        var report = CoverageReport(backend: backend.name)
        let clock = StepClock()
        do {
            progress("getting a coverage token and bringing the cellular path up")
            let backend = backend, pathProvider = pathProvider
            async let accessResult = Self.timed("coverage_token", clock) { () async throws(CellpathError) in
                try await backend.coverageAccess()
            }
            async let pathResult = Self.timed("path", clock) { () async throws(CellpathError) in
                try await pathProvider.cellularPath()
            }
            let (access, path) = await (accessResult, pathResult)
            report.steps += [access.timing, path.timing]
            let token = try access.result.get()
            report.path = try path.result.get()
            progress("asking \(token.url) through \(report.path!.interfaceName)")
            var request = checkURLRequest
            request.url = token.url
            request.headers.append(HTTPHeader("Authorization", "Bearer \(token.token)"))
            request.headers.append(HTTPHeader("Accept", "application/json"))
            let start = clock.now()
            let trace = await CellularHTTPClient(path: report.path!, dnsCache: dnsCache).trace(request)
            report.trace = trace
            report.steps.append(
                clock.timing(
                    "coverage", since: start, succeeded: trace.failure == nil && trace.result?.finalStatus == 200))
            if let failure = trace.failure { throw failure.cellpathError }
            guard let result = trace.result else {
                throw CellpathError(.internalError, "the coverage request ended without a result")
            }
            if let answer = CheckURLFailure(answer: result, lastHop: trace.hops.last, callback: nil) {
                throw answer.cellpathError
            }
            guard let json = result.json, json[string: "network_id"] != nil else {
                throw CellpathError(.protocolError, "the coverage answer has no network_id")
            }
            report.coverage = json
        } catch {
            report.failure =
                Task.isCancelled
                ? CellpathError(.cancelled, "cancelled")
                : error as? CellpathError ?? CellpathError(.cancelled, "cancelled")
        }
        await pathProvider.release()
        report.totalMs = clock.now()
        return report
    }

    private static func timed<T: Sendable>(
        _ step: String, _ clock: StepClock, _ work: () async throws(CellpathError) -> T
    ) async
        -> (result: Result<T, CellpathError>, timing: CheckStepTiming)
    {
        let start = clock.now()
        do {
            let value = try await work()
            return (.success(value), clock.timing(step, since: start, succeeded: true))
        } catch {
            return (.failure(error), clock.timing(step, since: start, succeeded: false))
        }
    }
}
