import CellpathCore
import CellpathCrypto
import SimulatedServices
import SimulatorScenario
import TestSupport
import Testing
import Workflow

@testable import CAMARA
@testable import CellularHTTP

/// Number Verification over OIDC against the fake operator in process: discovery, the authorize
/// URL, the device leg ending at the redirect URI, the code exchange with each client
/// authentication, the API's verdicts and errors.
@Suite(.ownThreads)
struct CAMARANumberVerificationTests {
    static let subscriber = OneSubscriber.address
    static let wifi = "192.0.2.23"
    /// An operator endpoint whose client authenticates with `private_key_jwt`-free Basic.
    static let endpoint = CAMARAEndpoint(
        apiRoot: "https://op.test", issuer: "https://op.test", clientID: "c",
        authentication: .clientSecretBasic(secret: "s"))

    static func verification(_ transport: OperatorTransport, _ client: CAMARAClient? = nil) -> CAMARANumberVerification
    {
        CAMARANumberVerification(
            client: client ?? transport.client(), redirectURI: OperatorTransport.redirectURI,
            purposeScope: "dpv:FraudPreventionAndDetection")
    }

    @Test(arguments: [JWSAlgorithm.rs256, .es256])
    func theSubscribersOwnNumberIsVerified(_ algorithm: JWSAlgorithm) async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(algorithm))
        let result = try await Self.verification(transport).verify(
            OneSubscriber.msisdn, over: transport.deviceLeg(from: Self.subscriber))
        #expect(result.verified)
        #expect(result.deviceLeg.result?.stoppedAt?.hasPrefix(OperatorTransport.redirectURI + "?code=") == true)
        #expect(transport.fake.callbackRequests == 0)
        let token = try #require(transport.requests.first { $0.url.hasSuffix("/oauth2/token") })
        let form = String(decoding: token.body ?? [], as: UTF8.self)
        #expect(form.contains("client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer"))
        #expect(form.contains("code_verifier=") && form.contains("grant_type=authorization_code"))
    }

    @Test func theAuthorizeURLCarriesTheOIDCAndPKCEParameters() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        let request = try await transport.client().authorizationRequest(
            scopes: ["number-verification:verify"], redirectURI: OperatorTransport.redirectURI,
            loginHint: "+447940448591")
        let items = Dictionary(Credentials.queryItems(of: request.url).map { ($0.name, $0.value) }) { $1 }
        #expect(request.url.hasPrefix(OperatorTransport.baseURL + "/oauth2/authorize?"))
        #expect(items["response_type"] == "code" && items["client_id"] == OperatorTransport.clientID)
        #expect(items["scope"] == "openid number-verification:verify")
        #expect(items["state"] == request.state && items["nonce"] == request.nonce && request.state != request.nonce)
        #expect(items["code_challenge_method"] == "S256")
        #expect(items["code_challenge"] == Base64URL.encode(Digest.sha256(Array(request.codeVerifier.utf8))))
        #expect(items["login_hint"] == "tel:+447940448591")
        #expect(items["redirect_uri"] == OperatorTransport.redirectURI)
    }

    @Test func theHashedNumberIsVerifiedAndAnotherNumberIsNot() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        let leg = transport.deviceLeg(from: Self.subscriber)
        #expect(try await Self.verification(transport).verify(OneSubscriber.msisdn, hashed: true, over: leg).verified)
        #expect(try await !Self.verification(transport).verify("+447700900123", over: leg).verified)
        #expect(try await !Self.verification(transport).verify("+447700900123", hashed: true, over: leg).verified)
        // SHA-256 of "+447940448591", from `printf %s +447940448591 | sha256sum`.
        #expect(
            CAMARANumberVerification.hashedPhoneNumber("+447940448591")
                == "7f2e4c89724fc08f3ecbc18739643d7bb94cb2b4708428a84454adc51666f248")
    }

    @Test func theDeviceNumberIsShared() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.rs256))
        let number = try await Self.verification(transport).devicePhoneNumber(
            over: transport.deviceLeg(from: Self.subscriber))
        #expect(number == OneSubscriber.msisdn)
    }

    @Test func aDeviceOffTheMobileNetworkIsRefusedAccess() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        let error = await #expect(throws: CAMARAError.self) {
            try await Self.verification(transport).verify(
                OneSubscriber.msisdn, over: transport.deviceLeg(from: Self.wifi))
        }
        guard case .authorizationRefused(let code, _)? = error else {
            Issue.record("expected a refusal, got \(String(describing: error))")
            return
        }
        #expect(code == "access_denied")
        #expect(error?.cellpathError(of: Self.endpoint).kind == .unavailable)
        #expect(!transport.requests.contains { $0.url.hasSuffix("/oauth2/token") })
    }

    @Test func anotherStateIsRefusedAndItsCodeNeverExchanged() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        let tampered = transport.deviceLeg(from: Self.subscriber) { location in
            location.replacing(/state=[0-9a-f]+/, with: "state=0123")
        }
        await #expect(throws: CAMARAError.stateMismatch) {
            try await Self.verification(transport).verify(OneSubscriber.msisdn, over: tampered)
        }
        let stripped = transport.deviceLeg(from: Self.subscriber) { $0.replacing(/&state=[0-9a-f]+/, with: "") }
        await #expect(throws: CAMARAError.stateMismatch) {
            try await Self.verification(transport).verify(OneSubscriber.msisdn, over: stripped)
        }
        #expect(CAMARAError.stateMismatch.cellpathError(of: Self.endpoint).kind == .protocolError)
        #expect(!transport.requests.contains { $0.url.hasSuffix("/oauth2/token") })
    }

    @Test func aChainThatDoesNotReachTheRedirectURIFails() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        let verification = CAMARANumberVerification(
            client: transport.client(), redirectURI: "https://app.example.test/elsewhere")
        // The operator refuses an unregistered redirect URI with a page, not a redirect.
        let error = await #expect(throws: CAMARAError.self) {
            try await verification.verify(OneSubscriber.msisdn, over: transport.deviceLeg(from: Self.subscriber))
        }
        #expect(error?.cellpathError(of: Self.endpoint).kind == .protocolError)
        #expect(error?.cellpathError(of: Self.endpoint).message.contains("status 400") == true)
    }

    @Test func aCodeIsExchangedOnlyWithItsVerifierAndOnlyOnce() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256))
        let client = transport.client()
        let request = try await client.authorizationRequest(
            scopes: ["number-verification:verify"], redirectURI: OperatorTransport.redirectURI, loginHint: nil)
        let other = try await client.authorizationRequest(
            scopes: ["number-verification:verify"], redirectURI: OperatorTransport.redirectURI, loginHint: nil)
        var leg = FetchRequest(url: request.url)
        leg.stop(at: try RedirectURIEnd(OperatorTransport.redirectURI))
        let location = try #require(await transport.deviceLeg(from: Self.subscriber)(leg).result?.stoppedAt)
        let code = try request.code(from: location)
        let wrongVerifier = await #expect(throws: CAMARAError.self) {
            _ = try await client.accessToken(code: code, of: other)
        }
        // Refused once, the code is gone, also for its own verifier.
        let reused = await #expect(throws: CAMARAError.self) {
            _ = try await client.accessToken(code: code, of: request)
        }
        for error in [wrongVerifier, reused] {
            guard case .api(400, "invalid_grant"?, _)? = error else {
                Issue.record("expected invalid_grant, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func aClientWithAnotherKeyOrSecretIsRefused() async throws {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256), secret: "s3cret")
        let impostor = transport.client(.privateKeyJWT(try await makeClientKey(.es256), keyID: nil))
        let error = await #expect(throws: CAMARAError.self) {
            _ = try await impostor.accessToken(scopes: ["sim-swap"])
        }
        guard case .api(401, "invalid_client"?, _)? = error else {
            Issue.record("expected invalid_client, got \(String(describing: error))")
            return
        }
        #expect(error?.cellpathError(of: Self.endpoint).kind == .configuration)
        await #expect(throws: CAMARAError.self) {
            _ = try await transport.client(.clientSecretBasic(secret: "wrong")).accessToken(scopes: ["sim-swap"])
        }
        let token = try await transport.client(.clientSecretBasic(secret: "s3cret")).accessToken(scopes: ["sim-swap"])
        #expect(token.count == 64)
    }

    @Test func anAssertionIsSignedForTheTokenEndpointAndAcceptedOnce() async throws {
        let key = try await makeClientKey(.rs256)
        let (fields, _) = try ClientAuthentication.privateKeyJWT(key, keyID: "k1").credentials(
            clientID: "c", tokenEndpoint: "https://op.test/token", now: 1_800_000_000)
        let assertion = try #require(fields.first { $0.0 == "client_assertion" }?.1)
        let publicKey = try JWSKey(pem: key.publicKeyPEM, isPrivate: false)
        let claims = try #require(CompactJWT.verifiedClaims(of: assertion, with: publicKey))
        #expect(claims[string: "iss"] == "c" && claims[string: "sub"] == "c")
        #expect(claims[string: "aud"] == "https://op.test/token")
        #expect(claims["exp"]?.intValue == 1_800_000_300 && claims[string: "jti"]?.count == 32)
        // A flipped bit of the payload breaks the signature.
        let parts = assertion.split(separator: ".").map(String.init)
        let forged = Base64URL.encode(Array(claims.serialized.replacing("\"c\"", with: "\"d\"").utf8))
        #expect(
            CompactJWT.verifiedClaims(of: [parts[0], forged, parts[2]].joined(separator: "."), with: publicKey) == nil)

        let transport = try OperatorTransport(key: key)
        let endpoint = transport.fake.tokenEndpoint
        let (replayed, _) = try ClientAuthentication.privateKeyJWT(key, keyID: nil).credentials(
            clientID: OperatorTransport.clientID, tokenEndpoint: endpoint, now: Double(Int.max / 2))
        let form = Array(
            FormEncoding.encode([("grant_type", "client_credentials"), ("scope", "sim-swap")] + replayed).utf8)
        func post() async throws -> Int {
            try await transport.send(
                HTTPClientRequest(
                    url: endpoint, method: "POST",
                    headers: [HTTPHeader("Content-Type", "application/x-www-form-urlencoded")], body: form)
            ).status
        }
        #expect(try await post() == 200)
        #expect(try await post() == 401)
    }

    @Test(arguments: [
        (403, CAMARAError.notAuthenticatedByMobileNetwork, FailureKind.unavailable),
        (403, "PERMISSION_DENIED", .configuration), (401, "UNAUTHENTICATED", .configuration),
        (400, "INVALID_ARGUMENT", .dataError), (404, "IDENTIFIER_NOT_FOUND", .dataError),
        (422, "MISSING_IDENTIFIER", .dataError), (429, "QUOTA_EXCEEDED", .temporary), (503, "UNAVAILABLE", .temporary),
        (400, "invalid_grant", .dataError), (400, "expired_token", .dataError),
        (400, "authorization_pending", .temporary), (400, "slow_down", .temporary),
        (400, "access_denied", .unavailable),
        (400, "invalid_client", .configuration)
    ])
    func camaraErrorsMapToExitCategories(_ status: Int, _ code: String, _ kind: FailureKind) {
        let error = CAMARAError.api(status: status, code: code, message: "the +447940448591 message")
        #expect(error.cellpathError(of: Self.endpoint).kind == kind)
        #expect(error.cellpathError(of: Self.endpoint).message.contains(code))
    }

    @Test(arguments: [
        ("access_denied", FailureKind.unavailable), ("consent_required", .unavailable),
        ("invalid_scope", .configuration), ("temporarily_unavailable", .temporary)
    ])
    func authorizationErrorsMapToExitCategories(_ error: String, _ kind: FailureKind) {
        #expect(
            CAMARAError.authorizationRefused(error: error, description: nil).cellpathError(of: Self.endpoint).kind
                == kind)
    }

    /// Refused credentials name the profile the client was made from: `[camara]`'s settings, or
    /// the Vonage application's.
    @Test func refusedCredentialsNameTheirProfile() {
        let refused = CAMARAError.api(status: 401, code: "invalid_client", message: nil)
        let camara = refused.cellpathError(of: Self.endpoint).hint ?? ""
        #expect(camara.contains("camara.client_id") && !camara.contains("vonage"), "\(camara)")
        var vonage = Self.endpoint
        vonage.authentication = .vonageApplication(.basic(apiKey: "k", apiSecret: "s"))
        let hint = refused.cellpathError(of: vonage).hint ?? ""
        #expect(hint.contains("vonage.application_id") && !hint.contains("camara"), "\(hint)")
    }
}
