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

/// Where an operator's Number Verification is and the scopes it wants: CAMARA's v2, or an
/// earlier release under another path (Vonage's `v031`, its scopes a purpose).
public struct NumberVerificationAPI: Sendable, Equatable {
    /// `verify`'s path under the API root.
    public var verifyPath: String
    /// `device-phone-number`'s path, when the operator offers it.
    public var devicePhoneNumberPath: String?
    /// The scopes of `verify` and of `device-phone-number`, beside `openid`.
    public var verifyScopes: [String]
    public var shareScopes: [String]

    /// CAMARA Number Verification v2 (`{apiRoot}/number-verification/v2`).
    public static let camara = NumberVerificationAPI(
        verifyPath: "/number-verification/v2/verify",
        devicePhoneNumberPath: "/number-verification/v2/device-phone-number",
        verifyScopes: ["number-verification:verify"], shareScopes: ["number-verification:device-phone-number:read"])

    /// Vonage's Number Verification (CAMARA 0.3.1 under `/camara/number-verification/v031`).
    public static let vonage = NumberVerificationAPI(
        verifyPath: "/camara/number-verification/v031/verify", devicePhoneNumberPath: nil,
        verifyScopes: ["dpv:FraudPreventionAndDetection#number-verification-verify-read"], shareScopes: [])
}

/// Number Verification over OIDC's authorization code flow with network-based
/// authentication: the device opens the authorize URL over its mobile network, the operator
/// identifies it by its address and redirects to `redirectURI` with a code (the chain stops there
/// without requesting it), the client exchanges the code and calls the API with that token.
public struct CAMARANumberVerification: Sendable {
    /// Opens a chain over the cellular path (e.g. `CellularHTTPClient.trace`).
    public typealias DeviceLeg = @Sendable (FetchRequest) async -> FetchReport

    public let client: CAMARAClient
    public let api: NumberVerificationAPI
    /// The client's registered redirect URI; never requested.
    public let redirectURI: String
    /// A purpose scope (`dpv:FraudPreventionAndDetection`), sent with the operation's, if any.
    public let purposeScope: String?
    /// The device leg's limits (hops, timeouts, CA file, address family); its URL is replaced.
    public let chain: FetchRequest

    public init(
        client: CAMARAClient, api: NumberVerificationAPI = .camara, redirectURI: String, purposeScope: String? = nil,
        chain: FetchRequest = FetchRequest(url: "")
    ) {
        self.client = client
        self.api = api
        self.redirectURI = redirectURI
        self.purposeScope = purposeScope
        self.chain = chain
    }

    /// Whether the device's subscription has `phoneNumber` (E.164 with `+`): sent as
    /// `hashedPhoneNumber` (SHA-256 hex) when `hashed`, and as `login_hint` when `loginHint`.
    public func verify(
        _ phoneNumber: String, hashed: Bool = false, loginHint: Bool = true, over deviceLeg: DeviceLeg
    ) async throws(CAMARAError) -> NumberVerificationResult {
        let authorization = try await authorizationRequest(forVerifying: phoneNumber, loginHint: loginHint)
        let (code, trace) = try await code(of: authorization, over: deviceLeg)
        let verified = try await verify(phoneNumber, hashed: hashed, code: code, of: authorization)
        return NumberVerificationResult(verified: verified, deviceLeg: trace)
    }

    /// The number of the device's subscription (`GET /device-phone-number`), as E.164.
    public func devicePhoneNumber(over deviceLeg: DeviceLeg) async throws(CAMARAError) -> String {
        let authorization = try await authorizationRequestForSharing()
        let (code, _) = try await code(of: authorization, over: deviceLeg)
        return try await devicePhoneNumber(code: code, of: authorization)
    }

    /// The first step of sharing, for a device leg run by someone else: a fresh authorization
    /// request for `device-phone-number`, without `login_hint`.
    public func authorizationRequestForSharing() async throws(CAMARAError) -> AuthorizationRequest {
        guard api.devicePhoneNumberPath != nil else {
            throw .invalidRequest("this operator does not share the device's phone number")
        }
        return try await client.authorizationRequest(
            scopes: scopes(api.shareScopes), redirectURI: redirectURI, loginHint: nil)
    }

    /// The last step of sharing: the `code` exchanged for a token, and the device's number asked.
    public func devicePhoneNumber(
        code: String, of authorization: AuthorizationRequest
    ) async throws(CAMARAError) -> String {
        guard let path = api.devicePhoneNumberPath else {
            throw .invalidRequest("this operator does not share the device's phone number")
        }
        let token = try await client.accessToken(code: code, of: authorization)
        let answer = try await client.call("GET", path, token: token)
        guard let number = answer[string: "devicePhoneNumber"] else {
            throw .malformedAnswer(status: 200, reason: "no devicePhoneNumber in the answer")
        }
        return number
    }

    /// The first step, for a device leg run by someone else (`verify --provider camara`): a
    /// fresh authorization request for `verify`, `phoneNumber` as its `login_hint` when `loginHint`.
    public func authorizationRequest(
        forVerifying phoneNumber: String, loginHint: Bool
    ) async throws(CAMARAError) -> AuthorizationRequest {
        try CAMARAClient.requirePhoneNumber(phoneNumber)
        guard (try? RedirectURIEnd(redirectURI)) != nil else {
            throw .invalidRequest("the redirect URI must be an absolute http(s) URL")
        }
        return try await client.authorizationRequest(
            scopes: scopes(api.verifyScopes), redirectURI: redirectURI, loginHint: loginHint ? phoneNumber : nil)
    }

    /// The last step: the `code` the device leg of `authorization` ended with exchanged for a
    /// token, and `verify` asked whether the device's subscription has `phoneNumber`.
    public func verify(
        _ phoneNumber: String, hashed: Bool, code: String, of authorization: AuthorizationRequest
    ) async throws(CAMARAError) -> Bool {
        let token = try await client.accessToken(code: code, of: authorization)
        let body: JSONValue =
            hashed
            ? .object([("hashedPhoneNumber", .string(Self.hashedPhoneNumber(phoneNumber)))])
            : .object([("phoneNumber", .string(phoneNumber))])
        let answer = try await client.call("POST", api.verifyPath, token: token, body: body)
        guard let verified = answer["devicePhoneNumberVerified"]?.boolValue else {
            throw .malformedAnswer(status: 200, reason: "no devicePhoneNumberVerified in the answer")
        }
        return verified
    }

    /// SHA-256 of the E.164 number in lower-case hex, as `hashedPhoneNumber` wants it.
    public static func hashedPhoneNumber(_ phoneNumber: String) -> String { Digest.sha256Hex(phoneNumber) }

    /// The operation's scopes and the purpose, if any.
    private func scopes(_ operation: [String]) -> [String] { operation + (purposeScope.map { [$0] } ?? []) }

    /// Runs the device leg of `authorization`: the code its redirect URI carried, and the leg.
    private func code(
        of authorization: AuthorizationRequest, over deviceLeg: DeviceLeg
    ) async throws(CAMARAError) -> (String, FetchReport) {
        let end: RedirectURIEnd
        do throws(FetchFailure) {
            end = try RedirectURIEnd(redirectURI)
        } catch {
            throw .invalidRequest("the redirect URI: \(error.message)")
        }
        var request = chain
        request.url = authorization.url
        request.stop(at: end)
        let trace = await deviceLeg(request)
        if let failure = trace.failure { throw .deviceLeg(failure.cellpathError) }
        guard let location = trace.result?.stoppedAt else {
            throw Self.notAtRedirectURI(status: trace.result?.finalStatus ?? 0)
        }
        return (try authorization.code(from: location), trace)
    }

    /// A device leg that ended with `status` instead of a redirect to the redirect URI.
    static func notAtRedirectURI(status: Int) -> CAMARAError {
        .deviceLeg(
            CellpathError(
                .protocolError,
                "the authorization ended with status \(status) instead of a redirect to the redirect URI"))
    }
}
