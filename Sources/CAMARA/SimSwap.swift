import CellpathCore

/// When the SIM of a number last changed, as CAMARA SIM Swap `retrieve-date` answers.
public struct SimSwapDate: Sendable, Equatable {
    /// RFC 3339 time of the latest SIM change; nil when the operator knows of none.
    public var latestSimChange: String?
    /// Days the operator monitors, when it monitors a limited period (and knows of no change in it).
    public var monitoredPeriod: Int?
}

/// Where an operator's SIM Swap is and how its token is had: CAMARA v2 with a client-credentials
/// (2-legged) token, or Vonage's (v0.4.0 under `/camara/sim-swap/v040`) with a CIBA token for
/// the number, a purpose scope per operation. The phone number is in the body either way.
public struct SimSwapAPI: Sendable, Equatable {
    public enum Authorization: Sendable, Equatable {
        /// A client-credentials token for this scope.
        case clientCredentials(scope: String)
        /// A CIBA token for the number, with the operation's scope.
        case ciba(checkScope: String, retrieveDateScope: String)
    }

    public var checkPath: String
    public var retrieveDatePath: String
    public var authorization: Authorization

    /// CAMARA SIM Swap's client-credentials scope.
    public static let camaraScope = "sim-swap"
    public static let camara = SimSwapAPI(
        checkPath: "/sim-swap/v2/check", retrieveDatePath: "/sim-swap/v2/retrieve-date",
        authorization: .clientCredentials(scope: camaraScope))
    public static let vonage = SimSwapAPI(
        checkPath: "/camara/sim-swap/v040/check", retrieveDatePath: "/camara/sim-swap/v040/retrieve-date",
        authorization: .ciba(
            checkScope: "dpv:FraudPreventionAndDetection#check-sim-swap",
            retrieveDateScope: "dpv:FraudPreventionAndDetection#retrieve-sim-swap-date"))
}

/// SIM Swap's two operations.
extension CAMARAClient {
    /// `maxAge`'s range in hours, and the API's default.
    public static let simSwapMaxAgeRange = 1 ... 2400
    public static let simSwapDefaultMaxAge = 240

    /// `POST /sim-swap/v2/check`: whether the SIM of `phoneNumber` changed in the last `maxAge`
    /// hours (the API's default of 240 when nil).
    public func simSwapped(
        phoneNumber: String, maxAge: Int?, api: SimSwapAPI = .camara
    ) async throws(CAMARAError) -> Bool {
        try Self.requirePhoneNumber(phoneNumber)
        var body: [(String, JSONValue)] = [("phoneNumber", .string(phoneNumber))]
        if let maxAge {
            guard Self.simSwapMaxAgeRange.contains(maxAge) else {
                throw .invalidRequest("maxAge must be 1 to 2400 hours")
            }
            body.append(("maxAge", .int(maxAge)))
        }
        let answer = try await call(api, api.checkPath, phoneNumber: phoneNumber, body: .object(body))
        guard let swapped = answer["swapped"]?.boolValue else {
            throw .malformedAnswer(status: 200, reason: "no swapped in the SIM swap check")
        }
        return swapped
    }

    /// `POST /sim-swap/v2/retrieve-date`: when the SIM of `phoneNumber` last changed.
    public func simSwapDate(phoneNumber: String, api: SimSwapAPI = .camara) async throws(CAMARAError) -> SimSwapDate {
        try Self.requirePhoneNumber(phoneNumber)
        let answer = try await call(
            api, api.retrieveDatePath, phoneNumber: phoneNumber, body: .object([("phoneNumber", .string(phoneNumber))]))
        let latest = answer["latestSimChange"]
        guard latest?.isNull == true || latest?.stringValue != nil else {
            throw .malformedAnswer(status: 200, reason: "no latestSimChange in the SIM swap date")
        }
        return SimSwapDate(latestSimChange: latest?.stringValue, monitoredPeriod: answer["monitoredPeriod"]?.intValue)
    }

    /// `POST`s `body` to `path` of `api` with the token its authorization gives for `phoneNumber`.
    private func call(
        _ api: SimSwapAPI, _ path: String, phoneNumber: String, body: JSONValue
    ) async throws(CAMARAError) -> JSONValue {
        switch api.authorization {
        case .clientCredentials(let scope):
            return try await call("POST", path, scopes: [scope], body: body)
        case .ciba(let checkScope, let retrieveDateScope):
            let scope = path == api.checkPath ? checkScope : retrieveDateScope
            let token = try await cibaToken(loginHint: phoneNumber, scopes: [scope])
            return try await call("POST", path, token: token, body: body)
        }
    }
}
