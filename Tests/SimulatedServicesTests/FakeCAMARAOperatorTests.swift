import CellpathCore
import CellpathCrypto
import FoundationEssentials
import HTTPServer
import SimulatedServices
import SimulatorScenario
import Testing

/// The fake CAMARA operator's contract, request by request: the shapes CAMARA Number
/// Verification v2 and SIM Swap v2 define (checked member by member, as a schema would), the
/// OIDC rules of its authorize and token endpoints.
struct FakeCAMARAOperatorTests {
    static let base = "https://operator.camara.test"
    static let redirectURI = base + FakeCAMARAOperator.callbackPath
    static let verifier = "a-pkce-code-verifier-of-forty-three-or-more-chars"
    static var challenge: String { Base64URL.encode(Digest.sha256(Array(verifier.utf8))) }

    let clock = ManualClock()
    let fake: FakeCAMARAOperator

    init() {
        let sim = SimulatedSIM(msisdn: TestWorld.msisdn, simChangedMinutesAgo: 30)
        fake = FakeCAMARAOperator(
            baseURL: Self.base,
            clients: [RegisteredCAMARAClient(clientID: "c", secret: "s", redirectURIs: [Self.redirectURI])],
            directory: FakeDirectory(byAddress: [TestWorld.mobileAddress: (sim, SimulatedNetwork())]),
            clock: clock.clock)
    }

    static let basic: HTTPHeaders = [
        "Authorization": "Basic " + Data("c:s".utf8).base64EncodedString(),
        "Content-Type": "application/x-www-form-urlencoded"
    ]

    func authorize(from address: String, _ extra: String = "&code_challenge_method=S256") -> HTTPResponse {
        fake.handle(
            TestWorld.request(
                "GET",
                Self.base
                    + "/oauth2/authorize?response_type=code&client_id=c&scope=openid%20number-verification%3Averify%20sim-swap"
                    + "&state=st&redirect_uri=" + FormEncoding.percentEncode(Self.redirectURI)
                    + "&code_challenge=" + Self.challenge + extra,
                from: address))
    }

    /// A 3-legged token of the mobile subscriber.
    func deviceToken() throws -> String {
        let location = try #require(authorize(from: TestWorld.mobileAddress).headers["Location"])
        let code = try #require(location.firstMatch(of: /code=([0-9a-f]+)/)?.1)
        let answer = fake.handle(
            TestWorld.request(
                "POST", Self.base + "/oauth2/token", headers: Self.basic,
                body: "grant_type=authorization_code&code=\(code)&code_verifier=\(Self.verifier)&redirect_uri="
                    + FormEncoding.percentEncode(Self.redirectURI)))
        #expect(answer.status == 200, "\(answer.bodyText)")
        return try #require(JSONValue.parse(answer.body)?[string: "access_token"])
    }

    func clientToken() throws -> String {
        let answer = fake.handle(
            TestWorld.request(
                "POST", Self.base + "/oauth2/token", headers: Self.basic,
                body: "grant_type=client_credentials&scope=sim-swap"))
        return try #require(JSONValue.parse(answer.body)?[string: "access_token"])
    }

    func call(_ method: String, _ path: String, token: String, _ body: String = "") -> HTTPResponse {
        fake.handle(
            TestWorld.request(
                method, Self.base + path, headers: ["Authorization": "Bearer \(token)"], body: body,
                from: TestWorld.wifiAddress))
    }

    /// The member names and JSON types of an object, e.g. `["swapped": "bool"]`.
    static func shape(_ response: HTTPResponse) -> [String: String] {
        guard case .object(let members)? = JSONValue.parse(response.body) else { return [:] }
        return Dictionary(
            uniqueKeysWithValues: members.map { name, value in
                let type: String =
                    switch value {
                    case .bool: "bool"
                    case .int: "int"
                    case .string: "string"
                    case .null: "null"
                    default: "other"
                    }
                return (name, type)
            })
    }

    /// A CAMARA error: exactly `{status, code, message}`, `status` the HTTP status.
    static func expectError(_ response: HTTPResponse, _ status: Int, _ code: String) {
        #expect(response.status == status)
        #expect(shape(response) == ["status": "int", "code": "string", "message": "string"], "\(response.bodyText)")
        #expect(JSONValue.parse(response.body)?["status"]?.intValue == status)
        #expect(JSONValue.parse(response.body)?[string: "code"] == code)
    }

    @Test func discoveryNamesTheIssuerAndItsEndpoints() throws {
        let answer = fake.handle(TestWorld.request("GET", Self.base + "/.well-known/openid-configuration"))
        let json = try #require(JSONValue.parse(answer.body))
        #expect(json[string: "issuer"] == Self.base)
        #expect(json[string: "authorization_endpoint"] == Self.base + "/oauth2/authorize")
        #expect(json[string: "token_endpoint"] == Self.base + "/oauth2/token")
        #expect(json["code_challenge_methods_supported"] == .array([.string("S256")]))
    }

    @Test func authorizeAuthenticatesByTheSourceAddressOnly() throws {
        let mobile = try #require(authorize(from: TestWorld.mobileAddress).headers["Location"])
        #expect(mobile.hasPrefix(Self.redirectURI + "?code=") && mobile.hasSuffix("&state=st"))
        let wifi = authorize(from: TestWorld.wifiAddress)
        #expect(wifi.status == 302)
        #expect(wifi.headers["Location"]?.hasPrefix(Self.redirectURI + "?error=access_denied&") == true)
        #expect(wifi.headers["Location"]?.hasSuffix("&state=st") == true)
        let noPKCE = authorize(from: TestWorld.mobileAddress, "")
        #expect(noPKCE.headers["Location"]?.contains("error=invalid_request") == true)
        let unregistered = fake.handle(
            TestWorld.request(
                "GET", Self.base + "/oauth2/authorize?client_id=c&redirect_uri=https%3A%2F%2Fevil.test%2F"))
        #expect(unregistered.status == 400 && unregistered.headers["Location"] == nil)
        #expect(fake.callbackRequests == 0)
    }

    @Test func verifyAnswersWithTheVerdictOnly() throws {
        let token = try deviceToken()
        let same = call("POST", "/number-verification/v2/verify", token: token, #"{"phoneNumber":"+447940448591"}"#)
        #expect(Self.shape(same) == ["devicePhoneNumberVerified": "bool"])
        #expect(JSONValue.parse(same.body)?["devicePhoneNumberVerified"] == .bool(true))
        let other = call("POST", "/number-verification/v2/verify", token: token, #"{"phoneNumber":"+447940448592"}"#)
        #expect(JSONValue.parse(other.body)?["devicePhoneNumberVerified"] == .bool(false))
        Self.expectError(
            call("POST", "/number-verification/v2/verify", token: token, #"{"phoneNumber":"447940448591"}"#), 400,
            "INVALID_ARGUMENT")
        Self.expectError(
            call(
                "POST", "/number-verification/v2/verify", token: token,
                #"{"phoneNumber":"+447940448591","hashedPhoneNumber":"00"}"#), 400, "INVALID_ARGUMENT")
        Self.expectError(call("POST", "/number-verification/v2/verify", token: "nope", "{}"), 401, "UNAUTHENTICATED")
        Self.expectError(
            call("POST", "/number-verification/v2/verify", token: try clientToken(), "{}"), 403, "PERMISSION_DENIED")
        clock.advance(seconds: 301)
        Self.expectError(call("POST", "/number-verification/v2/verify", token: token, "{}"), 401, "UNAUTHENTICATED")
    }

    @Test func simSwapAnswersAndRefusesAsCAMARASays() throws {
        let token = try clientToken()
        let check = call("POST", "/sim-swap/v2/check", token: token, #"{"phoneNumber":"+447940448591","maxAge":1}"#)
        #expect(Self.shape(check) == ["swapped": "bool"])
        #expect(JSONValue.parse(check.body)?["swapped"] == .bool(true))
        let date = call("POST", "/sim-swap/v2/retrieve-date", token: token, #"{"phoneNumber":"+447940448591"}"#)
        #expect(Self.shape(date) == ["latestSimChange": "string"])
        #expect(
            JSONValue.parse(date.body)?[string: "latestSimChange"]
                == SimulatorClock.timestamp(clock.clock.now() - 30 * 60))
        Self.expectError(call("POST", "/sim-swap/v2/check", token: token, "{}"), 422, "MISSING_IDENTIFIER")
        Self.expectError(
            call("POST", "/sim-swap/v2/check", token: token, #"{"phoneNumber":"+447940448591","maxAge":0}"#), 400,
            "OUT_OF_RANGE")
        Self.expectError(
            call("POST", "/sim-swap/v2/check", token: token, #"{"phoneNumber":"+15550009999"}"#), 404,
            "IDENTIFIER_NOT_FOUND")
        Self.expectError(
            call("POST", "/sim-swap/v2/check", token: try deviceToken(), #"{"phoneNumber":"+447940448591"}"#), 422,
            "UNNECESSARY_IDENTIFIER")
    }
}
