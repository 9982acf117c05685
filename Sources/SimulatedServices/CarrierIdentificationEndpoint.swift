import HTTPServer
import SimulatorScenario
import Synchronization
import SystemSupport

/// The carrier's subscriber-identification endpoint (http://mno.carrier.test, 100.64.0.1,
/// reachable only through the carrier): identifies the subscriber by the request's SOURCE
/// ADDRESS and redirects back to the API with a single-use assertion. Applies the scenario's
/// carrier faults. Safe to call from any thread.
///
/// Route: `GET /v1/identify/{check_id}?return=URL[&hop=N]`; `return` must point into the API.
public final class CarrierIdentificationEndpoint: SimulatedHTTPEndpoint {
    /// The session cookie set and required with the `requireCookies` fault.
    public static let sessionCookie = "mno_session"

    let directory: any SubscriberDirectory
    let faults: CarrierFaults
    let ledger: SubscriberAssertionLedger
    let baseURL: String
    let apiBaseURL: String
    private let sessions = Mutex<Set<String>>([])

    /// `apiBaseURL` is the only place `return` may point to (its `http://` twin included).
    public init(
        directory: any SubscriberDirectory, faults: CarrierFaults, ledger: SubscriberAssertionLedger,
        baseURL: String = "http://mno.carrier.test", apiBaseURL: String = "https://api.truid.test"
    ) {
        self.directory = directory
        self.faults = faults
        self.ledger = ledger
        self.baseURL = baseURL
        self.apiBaseURL = apiBaseURL
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard parts.count == 3, parts[0] == "v1", parts[1] == "identify", !parts[2].isEmpty else {
            return ProblemDetails.notFound(request.path)
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return ProblemDetails.methodNotAllowed(["GET"])
        }
        if faults.timeout { return .noAnswer }
        let checkID = parts[2]
        guard let back = request.query("return"), returnIsAllowed(back) else {
            return ProblemDetails.badRequest("return must be a URL of the API")
        }
        let hop = request.query("hop").flatMap { Int($0) } ?? 0
        if faults.redirectLoop {
            return .redirect(hopLocation(checkID, back: back, hop: hop == 1 ? 2 : 1))
        }
        var headers: HTTPHeaders = [:]
        if faults.requireCookies {
            if hop == 0 {
                let session = RandomBytes.hex(16)
                sessions.withLock { _ = $0.insert(session) }
                headers.add("Set-Cookie", "\(Self.sessionCookie)=\(session); Path=/; HttpOnly")
                headers.add("Set-Cookie", "mno_affinity=\(checkID.prefix(8)); Path=/v1")
                return .redirect(hopLocation(checkID, back: back, hop: 1), headers: headers)
            }
            guard let session = cookie(Self.sessionCookie, in: request),
                sessions.withLock({ $0.contains(session) })
            else {
                return ProblemDetails.response(
                    403, "session_required", "Forbidden",
                    "The carrier session cookie is missing; enable cookies")
            }
        }
        let internalHops = max(faults.extraHops, (faults.relativeLocation || faults.requireCookies) ? 1 : 0)
        if hop < internalHops {
            return .redirect(hopLocation(checkID, back: back, hop: hop + 1))
        }
        guard let sim = directory.subscriber(holding: request.remoteAddress) else {
            return .redirect(downgraded(WebEncoding.appending([("error", "mno_user_not_found")], to: back)))
        }
        let assertion = ledger.issue(
            SubscriberAssertion(sim: sim, network: directory.network(holding: request.remoteAddress)))
        return .redirect(downgraded(WebEncoding.appending([("assertion", assertion)], to: back)))
    }

    /// The next internal hop: absolute, or relative to the current path (`{id}?…`) with
    /// the `relativeLocation` fault.
    private func hopLocation(_ checkID: String, back: String, hop: Int) -> String {
        let relative = WebEncoding.appending(
            [("return", back), ("hop", String(hop))], to: WebEncoding.percentEncode(checkID))
        return faults.relativeLocation ? relative : baseURL + "/v1/identify/" + relative
    }

    /// With the `httpsDowngrade` fault, sends the device back to the API over plain http.
    private func downgraded(_ url: String) -> String {
        faults.httpsDowngrade && url.hasPrefix("https://") ? "http://" + url.dropFirst("https://".count) : url
    }

    private func returnIsAllowed(_ url: String) -> Bool {
        let host =
            apiBaseURL.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
        return ["https://\(host)/", "http://\(host)/"].contains { url.hasPrefix($0) }
    }

    private func cookie(_ name: String, in request: HTTPRequest) -> String? {
        for header in request.headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).trimmedSpaces }
                if parts.count == 2 && parts[0] == name { return parts[1] }
            }
        }
        return nil
    }
}
