import CellpathCore
import CellpathCrypto
import CellularHTTP

/// The verdict of a CAMARA Number Verification, with the device leg that authenticated the device.
public struct NumberVerificationResult: Sendable {
    /// `devicePhoneNumberVerified`: the device's mobile subscription has the number.
    public var verified: Bool
    /// The authorize URL's chain over the cellular path, up to the unrequested redirect URI.
    public var deviceLeg: FetchReport
}

/// CAMARA Number Verification v2 over OIDC's authorization code flow with network-based
/// authentication: the device opens the authorize URL over its mobile network, the operator
/// identifies it by its address and redirects to `redirectURI` with a code (the chain stops there
/// without requesting it), the client exchanges the code and calls the API with that token.
public struct CAMARANumberVerification: Sendable {
    /// Opens a chain over the cellular path (e.g. `CellularHTTPClient.trace`).
    public typealias DeviceLeg = @Sendable (FetchRequest) async -> FetchReport

    /// The scopes of the two operations.
    public static let verifyScope = "number-verification:verify"
    public static let shareScope = "number-verification:device-phone-number:read"

    public let client: CAMARAClient
    /// The client's registered redirect URI; never requested.
    public let redirectURI: String
    /// A purpose scope (`dpv:FraudPreventionAndDetection`), sent with the operation's, if any.
    public let purposeScope: String?
    /// The device leg's limits (hops, timeouts, CA file, address family); its URL is replaced.
    public let chain: FetchRequest

    public init(
        client: CAMARAClient, redirectURI: String, purposeScope: String? = nil,
        chain: FetchRequest = FetchRequest(url: "")
    ) {
        self.client = client
        self.redirectURI = redirectURI
        self.purposeScope = purposeScope
        self.chain = chain
    }

    /// Whether the device's subscription has `phoneNumber` (E.164 with `+`): sent as
    /// `hashedPhoneNumber` (SHA-256 hex) when `hashed`, and as `login_hint` when `loginHint`.
    public func verify(
        _ phoneNumber: String, hashed: Bool = false, loginHint: Bool = true, over deviceLeg: DeviceLeg
    ) async throws(CAMARAError) -> NumberVerificationResult {
        try CAMARAClient.requirePhoneNumber(phoneNumber)
        let (token, trace) = try await authorize(
            Self.verifyScope, loginHint: loginHint ? phoneNumber : nil, over: deviceLeg)
        let body: JSONValue =
            hashed
            ? .object([("hashedPhoneNumber", .string(Self.hashedPhoneNumber(phoneNumber)))])
            : .object([("phoneNumber", .string(phoneNumber))])
        let answer = try await client.call("POST", "/number-verification/v2/verify", token: token, body: body)
        guard let verified = answer["devicePhoneNumberVerified"]?.boolValue else {
            throw .malformedAnswer(status: 200, reason: "no devicePhoneNumberVerified in the answer")
        }
        return NumberVerificationResult(verified: verified, deviceLeg: trace)
    }

    /// The number of the device's subscription (`GET /device-phone-number`), as E.164.
    public func devicePhoneNumber(over deviceLeg: DeviceLeg) async throws(CAMARAError) -> String {
        let (token, _) = try await authorize(Self.shareScope, loginHint: nil, over: deviceLeg)
        let answer = try await client.call("GET", "/number-verification/v2/device-phone-number", token: token)
        guard let number = answer[string: "devicePhoneNumber"] else {
            throw .malformedAnswer(status: 200, reason: "no devicePhoneNumber in the answer")
        }
        return number
    }

    /// SHA-256 of the E.164 number in lower-case hex, as `hashedPhoneNumber` wants it.
    public static func hashedPhoneNumber(_ phoneNumber: String) -> String { Digest.sha256Hex(phoneNumber) }

    /// Runs the device leg for `scope` and exchanges its code: the access token and the leg.
    private func authorize(
        _ scope: String, loginHint: String?, over deviceLeg: DeviceLeg
    ) async throws(CAMARAError) -> (String, FetchReport) {
        let end: RedirectURIEnd
        do throws(FetchFailure) {
            end = try RedirectURIEnd(redirectURI)
        } catch {
            throw .invalidRequest("the redirect URI: \(error.message)")
        }
        let authorization = try await client.authorizationRequest(
            scopes: [scope] + (purposeScope.map { [$0] } ?? []), redirectURI: redirectURI, loginHint: loginHint)
        var request = chain
        request.url = authorization.url
        request.stop(at: end)
        let trace = await deviceLeg(request)
        if let failure = trace.failure { throw .deviceLeg(failure.cellpathError) }
        guard let location = trace.result?.stoppedAt else {
            let status = trace.result?.finalStatus ?? 0
            throw .deviceLeg(
                CellpathError(
                    .protocolError,
                    "the authorization ended with status \(status) instead of a redirect to the redirect URI"))
        }
        let code = try authorization.code(from: location)
        return (try await client.accessToken(code: code, of: authorization), trace)
    }
}
