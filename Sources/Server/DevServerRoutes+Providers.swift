import CAMARA
import CellpathCore
import HTTPServer
import Workflow

/// The product routes over a provider other than tru.ID: SubscriberCheck and PhoneCheck as a
/// silent-auth verification (Twilio SNA, Vonage silent_auth), SIMCheck as CAMARA SIM Swap.
extension DevServerRoutes {
    /// Why CAMARA serves no SubscriberCheck or PhoneCheck.
    static let camaraHasNoCheckURL =
        "CAMARA Number Verification ends its device leg at the app's redirect_uri, which tru.ID's SDKs follow"
    /// Why a silent-auth provider serves no SIMCheck.
    static let silentAuthHasNoSIMSwap = "this provider has no SIM swap API (serve --provider camara or truid)"

    /// The window of a SIMCheck's `no_sim_change`, in hours: tru.ID's 7 days.
    static let simCheckWindowHours = 168

    /// POST of a SubscriberCheck or PhoneCheck: the provider's verification → `{check_id, check_url}`.
    func createVerification(
        _ request: HTTPRequest, phoneNumber: String, redirectURL: String?
    ) async throws(ErrorAnswer) -> HTTPResponse {
        let verifier = try silentAuth(request)
        var options = CheckOptions()
        options.redirectURL = redirectURL
        let created = try await provided { () async throws(CellpathError) in
            try await verifier.create(phoneNumber: phoneNumber, options: options)
        }
        return Self.json(200, [("check_id", .string(created.checkID)), ("check_url", .string(created.checkURL))])
    }

    /// GET of a check's result: the provider's verdict, without a code (Twilio SNA). Vonage
    /// completes with the device's code only: 501, naming the route that takes it.
    func verificationResult(
        _ request: HTTPRequest, _ product: CheckProduct, _ version: APIVersion, checkID: String
    ) async throws(ErrorAnswer) -> HTTPResponse {
        let verifier = try silentAuth(request)
        guard verifier.deviceLeg.ending == .snaErrorCode else {
            let exchange =
                product == .phoneCheck ? "/v0.2/phone-check/exchange-code" : "/v0.2/subscriber-check/exchange-code"
            throw provider.notServed(
                Self.routeName(request.path),
                "it completes a verification with the code the device got: POST \(exchange)")
        }
        let verdict = try await provided { () async throws(CellpathError) in
            try await verifier.complete(CreatedCheckHandle(checkID: checkID, checkURL: ""), ending: nil)
        }
        return Self.verdictAnswer(verdict, checkID: checkID, product, lastSimChange: version == .v0_1)
    }

    /// exchange-code: the verification completed with the device's code (Twilio takes none).
    func completeVerification(
        _ request: HTTPRequest, _ product: CheckProduct, checkID: String, code: String
    ) async throws(ErrorAnswer) -> HTTPResponse {
        let verifier = try silentAuth(request)
        let verdict = try await provided { () async throws(CellpathError) in
            try await verifier.complete(
                CreatedCheckHandle(checkID: checkID, checkURL: ""), ending: CheckCallback(checkID: checkID, code: code))
        }
        return Self.verdictAnswer(verdict, checkID: checkID, product, lastSimChange: false)
    }

    /// SIMCheck as CAMARA SIM Swap: `check` over tru.ID's 7 days and `retrieve-date`.
    func simSwapCheck(_ request: HTTPRequest, phoneNumber: String) async throws(ErrorAnswer) -> HTTPResponse {
        guard case .camara(let client) = provider else {
            throw provider.notServed(Self.routeName(request.path), Self.silentAuthHasNoSIMSwap)
        }
        let (swapped, date) = try await provided { () async throws(CellpathError) in
            do throws(CAMARAError) {
                return (
                    try await client.simSwapped(phoneNumber: phoneNumber, maxAge: Self.simCheckWindowHours),
                    try await client.simSwapDate(phoneNumber: phoneNumber)
                )
            } catch {
                throw error.cellpathError(of: client.endpoint)
            }
        }
        return Self.json(
            200,
            [
                ("no_sim_change", .bool(!swapped)),
                ("last_sim_change_at", date.latestSimChange.map(JSONValue.string) ?? .null),
                ("sim_change_within", .null), ("check_id", .string(UUIDv4.random()))
            ])
    }

    /// The silent-auth provider behind a SubscriberCheck or PhoneCheck route; 501 for CAMARA.
    private func silentAuth(_ request: HTTPRequest) throws(ErrorAnswer) -> any SilentAuthProvider {
        guard case .silentAuth(_, let verifier) = provider else {
            throw provider.notServed(Self.routeName(request.path), Self.camaraHasNoCheckURL)
        }
        return verifier
    }

    /// A verdict as the dev-server answers it: `match`, `check_id`, and for a SubscriberCheck
    /// the SIM-change fields, null (silent-auth providers say nothing about the SIM).
    static func verdictAnswer(
        _ verdict: CheckVerdict, checkID: String, _ product: CheckProduct, lastSimChange: Bool
    ) -> HTTPResponse {
        var body: [(String, JSONValue)] = [
            ("match", verdict.match.map(JSONValue.bool) ?? .null), ("check_id", .string(checkID))
        ]
        if product == .subscriberCheck {
            body.append(("no_sim_change", .null))
            if lastSimChange { body.append(("last_sim_change_at", .null)) }
        }
        return json(200, body)
    }

    /// Runs a provider call, timing it; its failure answered with a short JSON message: bad
    /// input or an unknown verification 400, refused credentials 502, the provider busy 503,
    /// anything else (unreachable, a broken answer) 502.
    func provided<T: Sendable>(_ body: () async throws(CellpathError) -> T) async throws(ErrorAnswer) -> T {
        let started = ContinuousClock.now
        defer { timed(since: started) }
        do {
            return try await body()
        } catch {
            let message = "\(provider.name): \(error.message)"
            switch error.kind {
            case .dataError, .usage: throw ErrorAnswer(400, message)
            case .temporary: throw ErrorAnswer(503, message, headers: ["Retry-After": "1"])
            default: throw ErrorAnswer(502, message)
            }
        }
    }
}
