import CellpathCore
import CellularHTTP

/// A backend that speaks the tru.ID development server's contract (tru.ID's `dev-server`,
/// `tru server`, or `cellpath serve`), as the tutorial's apps call it:
/// v0.1 `POST /subscriber-check` then `GET /subscriber-check/{check_id}` (`/phone-check` then
/// `GET /phone-check?check_id=`); v0.2 `POST /v0.2/…-check` then `POST /v0.2/…-check/exchange-code`;
/// `POST /sim-check`; `GET /coverage-access-token`.
public struct DevServerBackend: CheckBackend {
    public let baseURL: String
    private let caller: BackendCaller

    /// `baseURL` without a trailing `/`; `http` sends the calls over the default network.
    public init(baseURL: String, http: HTTPClient, caFile: String?, timeout: Duration, retry: RetryPolicy = .default) {
        self.baseURL = baseURL
        caller = BackendCaller(
            http: http, caFile: caFile, timeout: timeout, retry: retry, errorDescription: Self.errorMessage)
    }

    public var name: String { "server \(baseURL)" }

    public func create(
        _ product: CheckProduct, phoneNumber: String, options: CheckOptions
    ) async throws(CellpathError) -> CreatedCheckHandle {
        var body: [(String, JSONValue)] = [("phone_number", .string(phoneNumber))]
        if options.apiVersion == .v0_2, let redirect = options.redirectURL {
            body.append(("redirect_url", .string(redirect)))
        }
        if let reference = options.referenceID { body.append(("reference_id", .string(reference))) }
        let json = try await caller.call(
            "POST", url: route(product, options.apiVersion), json: .object(body), operation: "create the check")
        guard let checkID = json[string: "check_id"], let checkURL = json[string: "check_url"] else {
            throw CellpathError(
                .protocolError, "the server's answer to creating the check has no check_id and check_url",
                hint: "is \(baseURL) a tru.ID development server (or cellpath serve)?")
        }
        return CreatedCheckHandle(checkID: checkID, checkURL: checkURL, ttl: json["ttl"]?.intValue)
    }

    public func complete(
        _ product: CheckProduct, check: CreatedCheckHandle, callback: CheckCallback?
    ) async throws(CellpathError) -> CheckVerdict {
        let json: JSONValue
        if let callback {
            guard let code = callback.code else { throw CheckVerdict.failedCallback(callback) }
            var body: [(String, JSONValue)] = [("check_id", .string(check.checkID)), ("code", .string(code))]
            if let reference = callback.referenceID { body.append(("reference_id", .string(reference))) }
            json = try await caller.call(
                "POST", url: route(product, .v0_2) + "/exchange-code", json: .object(body),
                operation: "exchange the code")
        } else {
            guard TruAPIClient.isPlainSegment(check.checkID) else {
                throw CellpathError(
                    .protocolError,
                    "the server's check_id is not a plain id: \(String(check.checkID.prefix(40)).terminalSafe)")
            }
            let id = check.checkID
            // The tutorial apps read a SubscriberCheck by path; dev-server ≥ 2022 reads the query: send both.
            let url =
                product == .subscriberCheck
                ? "\(route(product, .v0_1))/\(id)?check_id=\(id)" : "\(route(product, .v0_1))?check_id=\(id)"
            json = try await caller.call("GET", url: url, json: nil, operation: "read the check's result")
        }
        var verdict = CheckVerdict(json: json)
        if verdict.checkID == nil { verdict.checkID = check.checkID }
        return verdict
    }

    public func simCheck(phoneNumber: String, options: CheckOptions) async throws(CellpathError) -> CheckVerdict {
        let json = try await caller.call(
            "POST", url: "\(baseURL)/sim-check", json: .object([("phone_number", .string(phoneNumber))]),
            operation: "run the SIMCheck")
        return CheckVerdict(json: json)
    }

    public func coverageAccess() async throws(CellpathError) -> CoverageAccess {
        let json = try await caller.call(
            "GET", url: "\(baseURL)/coverage-access-token", json: nil, operation: "get a coverage token")
        guard let token = json[string: "token"], let url = json[string: "url"] else {
            throw CellpathError(.protocolError, "the server's coverage-access-token answer has no token and url")
        }
        return CoverageAccess(token: token, url: url)
    }

    /// `/subscriber-check`, `/v0.2/phone-check`, …
    private func route(_ product: CheckProduct, _ version: APIVersion) -> String {
        let name = product == .phoneCheck ? "phone-check" : "subscriber-check"
        return version == .v0_2 ? "\(baseURL)/v0.2/\(name)" : "\(baseURL)/\(name)"
    }

    /// The development server's `{error_message}`, or an API problem it passed through.
    private static func errorMessage(_ json: JSONValue?) -> String? {
        json?[string: "error_message"]
            ?? Problem(json).map { [$0.title, $0.detail].compactMap { $0 }.joined(separator: ": ") }
    }
}

extension CheckVerdict {
    /// The failure a v0.2 callback that carries an error means: the check failed at the operator.
    static func failedCallback(_ callback: CheckCallback) -> CellpathError {
        CellpathError(
            .unavailable,
            "the check failed at the operator: \(callback.error ?? "no code in the callback")"
                + (callback.errorDescription.map { " (\($0))" } ?? ""))
    }
}
