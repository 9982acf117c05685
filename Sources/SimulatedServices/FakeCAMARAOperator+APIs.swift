import CellpathCore
import CellpathCrypto
import HTTPServer
import SimulatorScenario

/// Number Verification v2 and SIM Swap v2 of the fake operator.
extension FakeCAMARAOperator {
    /// `POST /number-verification/v2/verify`: exactly one of `phoneNumber` and `hashedPhoneNumber`
    /// (SHA-256 hex of the E.164 number), compared with the authenticated device's number.
    func verify(_ request: HTTPRequest) -> HTTPResponse {
        let grant: Grant
        switch self.grant(request, anyOf: ["number-verification:verify"]) {
        case .success(let granted): grant = granted
        case .failure(let refusal): return refusal.response
        }
        guard let msisdn = grant.msisdn, !faults.notAuthenticatedByMobileNetwork else {
            return Self.notAuthenticatedByMobileNetwork
        }
        guard let body = Self.jsonObject(request) else { return Self.invalidArgument("the body must be a JSON object") }
        switch (body[string: "phoneNumber"], body[string: "hashedPhoneNumber"]) {
        case (let number?, nil):
            guard Self.isPhoneNumber(number) else { return Self.invalidArgument("phoneNumber must be E.164 with +") }
            return Self.verdict(number == msisdn)
        case (nil, let hashed?):
            guard hashed.count == 64, hashed.allSatisfy(\.isHexDigit) else {
                return Self.invalidArgument("hashedPhoneNumber must be 64 hexadecimal digits")
            }
            return Self.verdict(hashed.lowercased() == Digest.sha256Hex(msisdn))
        default:
            return Self.invalidArgument("exactly one of phoneNumber and hashedPhoneNumber is required")
        }
    }

    /// `GET /number-verification/v2/device-phone-number`.
    func devicePhoneNumber(_ request: HTTPRequest) -> HTTPResponse {
        switch grant(request, anyOf: ["number-verification:device-phone-number:read"]) {
        case .success(let grant):
            guard let msisdn = grant.msisdn else { return Self.notAuthenticatedByMobileNetwork }
            return .json(200, .object([("devicePhoneNumber", .string(msisdn))]))
        case .failure(let refusal): return refusal.response
        }
    }

    /// `POST /sim-swap/v2/check`: `swapped` when the SIM changed within `maxAge` hours (240 by default).
    func simSwapCheck(_ request: HTTPRequest) -> HTTPResponse {
        let minutesAgo: Int?
        switch subscriberSIMChange(request, scope: "sim-swap:check") {
        case .success(let minutes): minutesAgo = minutes
        case .failure(let refusal): return refusal.response
        }
        let maxAge = Self.jsonObject(request)?["maxAge"] ?? .int(240)
        guard let hours = maxAge.intValue else { return Self.invalidArgument("maxAge must be an integer") }
        guard (1 ... 2400).contains(hours) else { return Self.error(400, "OUT_OF_RANGE", "maxAge must be 1 to 2400") }
        return .json(200, .object([("swapped", .bool(minutesAgo.map { $0 <= hours * 60 } ?? false))]))
    }

    /// `POST /sim-swap/v2/retrieve-date`: the time of the latest SIM change, or null with the
    /// monitored period (days) when none is known within it.
    func simSwapDate(_ request: HTTPRequest) -> HTTPResponse {
        let minutesAgo: Int?
        switch subscriberSIMChange(request, scope: "sim-swap:retrieve-date") {
        case .success(let minutes): minutesAgo = minutes
        case .failure(let refusal): return refusal.response
        }
        guard let minutesAgo, minutesAgo <= Self.monitoredDays * 24 * 60 else {
            return .json(200, .object([("latestSimChange", .null), ("monitoredPeriod", .int(Self.monitoredDays))]))
        }
        let changed = clock.now() - Double(minutesAgo) * 60
        return .json(200, .object([("latestSimChange", .string(SimulatorClock.timestamp(changed)))]))
    }

    /// Minutes since the SIM change of the request's subscriber: the authenticated device's
    /// (3-legged, no `phoneNumber` allowed) or the body's `phoneNumber` (2-legged, required).
    private func subscriberSIMChange(_ request: HTTPRequest, scope: String) -> Result<Int?, Refusal> {
        let grant: Grant
        switch self.grant(request, anyOf: ["sim-swap", scope]) {
        case .success(let granted): grant = granted
        case .failure(let refusal): return .failure(refusal)
        }
        guard let body = Self.jsonObject(request) else {
            return .failure(Refusal(Self.invalidArgument("the body must be a JSON object")))
        }
        let number = body["phoneNumber"]
        switch (grant.msisdn, number) {
        case (let msisdn?, let number?) where dialect.numberWithSubscriberToken:
            guard number.stringValue == msisdn else {
                return .failure(
                    Refusal(Self.error(403, "INVALID_TOKEN_CONTEXT", "phoneNumber is not the token's subscriber.")))
            }
        case (_?, _?):
            return .failure(
                Refusal(
                    Self.error(422, "UNNECESSARY_IDENTIFIER", "The device is already identified by the access token.")))
        case (nil, nil):
            return .failure(Refusal(Self.error(422, "MISSING_IDENTIFIER", "The device cannot be identified.")))
        default:
            break
        }
        if let number {
            guard let text = number.stringValue, Self.isPhoneNumber(text) else {
                return .failure(Refusal(Self.invalidArgument("phoneNumber must be E.164 with +")))
            }
        }
        guard let sim = directory.subscriber(msisdn: number?.stringValue ?? grant.msisdn ?? "") else {
            return .failure(Refusal(Self.error(404, "IDENTIFIER_NOT_FOUND", "Device identifier not found.")))
        }
        return .success(sim.simChangedMinutesAgo)
    }

    private static func verdict(_ verified: Bool) -> HTTPResponse {
        .json(200, .object([("devicePhoneNumberVerified", .bool(verified))]))
    }

    private static func invalidArgument(_ message: String) -> HTTPResponse {
        error(400, "INVALID_ARGUMENT", "Client specified an invalid argument, request body or query param: \(message)")
    }

    private static var notAuthenticatedByMobileNetwork: HTTPResponse {
        error(
            403, "NUMBER_VERIFICATION.USER_NOT_AUTHENTICATED_BY_MOBILE_NETWORK",
            "Client must authenticate via the mobile network to use this service")
    }

    /// `^\+[1-9][0-9]{4,14}$`.
    static func isPhoneNumber(_ text: String) -> Bool {
        let digits = text.dropFirst()
        return text.hasPrefix("+") && (5 ... 15).contains(digits.count) && digits.first != "0"
            && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
