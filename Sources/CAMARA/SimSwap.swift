import CellpathCore

/// When the SIM of a number last changed, as CAMARA SIM Swap `retrieve-date` answers.
public struct SimSwapDate: Sendable, Equatable {
    /// RFC 3339 time of the latest SIM change; nil when the operator knows of none.
    public var latestSimChange: String?
    /// Days the operator monitors, when it monitors a limited period (and knows of no change in it).
    public var monitoredPeriod: Int?
}

/// CAMARA SIM Swap v2 with a client-credentials (2-legged) token: the phone number is in the body.
extension CAMARAClient {
    /// The scope of both operations.
    public static let simSwapScope = "sim-swap"
    /// `maxAge`'s range in hours, and the API's default.
    public static let simSwapMaxAgeRange = 1 ... 2400
    public static let simSwapDefaultMaxAge = 240

    /// `POST /sim-swap/v2/check`: whether the SIM of `phoneNumber` changed in the last `maxAge`
    /// hours (the API's default of 240 when nil).
    public func simSwapped(phoneNumber: String, maxAge: Int?) async throws(CAMARAError) -> Bool {
        try Self.requirePhoneNumber(phoneNumber)
        var body: [(String, JSONValue)] = [("phoneNumber", .string(phoneNumber))]
        if let maxAge {
            guard Self.simSwapMaxAgeRange.contains(maxAge) else {
                throw .invalidRequest("maxAge must be 1 to 2400 hours")
            }
            body.append(("maxAge", .int(maxAge)))
        }
        let answer = try await call("POST", "/sim-swap/v2/check", scopes: [Self.simSwapScope], body: .object(body))
        guard let swapped = answer["swapped"]?.boolValue else {
            throw .malformedAnswer(status: 200, reason: "no swapped in the SIM swap check")
        }
        return swapped
    }

    /// `POST /sim-swap/v2/retrieve-date`: when the SIM of `phoneNumber` last changed.
    public func simSwapDate(phoneNumber: String) async throws(CAMARAError) -> SimSwapDate {
        try Self.requirePhoneNumber(phoneNumber)
        let answer = try await call(
            "POST", "/sim-swap/v2/retrieve-date", scopes: [Self.simSwapScope],
            body: .object([("phoneNumber", .string(phoneNumber))]))
        let latest = answer["latestSimChange"]
        guard latest?.isNull == true || latest?.stringValue != nil else {
            throw .malformedAnswer(status: 200, reason: "no latestSimChange in the SIM swap date")
        }
        return SimSwapDate(latestSimChange: latest?.stringValue, monitoredPeriod: answer["monitoredPeriod"]?.intValue)
    }
}
