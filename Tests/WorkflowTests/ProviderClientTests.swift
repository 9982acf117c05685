import CellpathCore
import CellpathCrypto
import FoundationEssentials
import HTTPServer
import Synchronization
import SystemSupport
import TestSupport
import Testing

@testable import CellularHTTP
@testable import SimulatedServices
@testable import Workflow

/// A provider's fake API called in-process (no sockets): every request recorded, answered as
/// from the default network (192.0.2.23); the device leg opened from the subscriber's bearer.
final class EndpointTransport: TruAPITransport {
    let endpoint: any SimulatedHTTPEndpoint
    private let log = Mutex<[HTTPClientRequest]>([])

    init(_ endpoint: any SimulatedHTTPEndpoint) { self.endpoint = endpoint }

    var requests: [HTTPClientRequest] { log.withLock { $0 } }

    func send(_ request: HTTPClientRequest) async throws(FetchFailure) -> HTTPClientResponse {
        log.withLock { $0.append(request) }
        return FakeAPITransport.clientResponse(
            endpoint.handle(
                FakeAPITransport.serverRequest(
                    request.method, request.url, headers: request.headers, body: request.body, from: "192.0.2.23")))
    }

    /// The device leg from `address`, following same-host redirects; the last answer.
    func open(_ url: String, from address: String = OneSubscriber.address) -> HTTPResponse {
        var current = url
        for _ in 0 ..< 5 {
            let response = endpoint.handle(FakeAPITransport.serverRequest("GET", current, from: address))
            guard (300 ..< 400).contains(response.status), let location = response.headers["Location"],
                !location.contains("#")
            else { return response }
            current = location
        }
        return HTTPResponse(status: 0)
    }
}

/// The answer a device leg ended with, as the cellular chain reports it.
func trace(ending response: HTTPResponse, url: String = "https://fake.test/end") -> FetchReport {
    let hop = HopTrace(
        index: 1, method: "GET", url: url, status: response.status, location: response.headers["Location"],
        remoteAddress: "203.0.113.10", remotePort: 443, localAddress: OneSubscriber.address, localPort: 40000,
        connectionReused: false, tlsVersion: "TLSv1.3", httpVersion: "HTTP/1.1",
        timings: HopTimings(dnsMs: 1, connectMs: 1, tlsMs: 1, firstByteMs: 1, totalMs: 4), dnsAnswers: nil,
        responseHeaders: [], requestHeaders: [], bodyBytes: response.body.count, headerBytes: 0, downgrade: false,
        startedAt: 0)
    let location = response.headers["Location"]
    let result = FetchResult(
        finalStatus: response.status, finalURL: url, finalBody: response.bodyText, finalBodyTruncated: false,
        finalContentType: response.headers["Content-Type"], json: JSONValue.parse(response.body),
        stoppedAt: location)
    return FetchReport(
        interfaceName: "wwan0", localAddresses: [OneSubscriber.address], dnsServers: [], hops: [hop], result: result,
        failure: nil, totalMs: 4)
}

/// Twilio Verify SNA's client against the fake: request shapes, Basic auth, the text ending,
/// VerificationCheck's verdicts and errors. No network, no root.
struct TwilioVerifyClientTests {
    static let configuration = FakeTwilioVerify.Configuration(
        accountSID: "AC" + String(repeating: "1", count: 32), authToken: "twilio-token",
        serviceSID: "VA" + String(repeating: "2", count: 32), maxPendingPerNumber: 1)

    static func client(_ transport: EndpointTransport, token: String = "twilio-token") -> TwilioVerifyClient {
        let account = TwilioVerifyAccount(
            baseURL: "https://verify.twilio.test/", accountSID: configuration.accountSID, authToken: token,
            serviceSID: configuration.serviceSID)
        return TwilioVerifyClient(
            account: account, transport: transport, caFile: nil, timeout: .seconds(5), retry: .never)
    }

    static func fake() -> EndpointTransport {
        EndpointTransport(FakeTwilioVerify(configuration: configuration, directory: OneSubscriber()))
    }

    @Test func createSendsTheFormWithBasicAuthToTheService() async throws {
        let transport = Self.fake()
        let created = try await Self.client(transport).create(
            phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        let request = try #require(transport.requests.first)
        #expect(request.method == "POST")
        #expect(request.url == "https://verify.twilio.test/v2/Services/\(Self.configuration.serviceSID)/Verifications")
        #expect(String(decoding: request.body ?? [], as: UTF8.self) == "To=%2B447940448591&Channel=sna")
        #expect(request.headers.contains(HTTPHeader("Content-Type", "application/x-www-form-urlencoded")))
        let basic = Data("\(Self.configuration.accountSID):twilio-token".utf8).base64EncodedString()
        #expect(request.headers.contains(HTTPHeader("Authorization", "Basic \(basic)")))
        #expect(created.checkID.hasPrefix("VE") && created.checkURL.hasPrefix("https://verify.twilio.test/v2/sna/"))
    }

    @Test func theSubscribersOwnNumberIsApprovedOnce() async throws {
        let transport = Self.fake()
        let client = Self.client(transport)
        let created = try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        let ending = ChainEnding.snaErrorCode.callback(
            of: trace(ending: transport.open(created.checkURL)), checkID: created.checkID)
        #expect(ending == CheckCallback(checkID: created.checkID))
        let verdict = try await client.complete(created, ending: ending)
        #expect(verdict.match == true && verdict.status == "approved")
        // Approved is done with: Twilio answers 404 (20404) afterwards.
        await #expect { try await client.complete(created, ending: ending) } throws: { error in
            let error = try #require(error as? CellpathError)
            return error.kind == .dataError && error.message.contains("404, 20404")
        }
    }

    @Test func anotherNumberIsNotVerifiedWith60500() async throws {
        let transport = Self.fake()
        let client = Self.client(transport)
        let created = try await client.create(phoneNumber: "+447700900123", options: CheckOptions())
        _ = transport.open(created.checkURL)
        let verdict = try await client.complete(created, ending: CheckCallback(checkID: created.checkID))
        #expect(verdict.match == false && verdict.errorCode == "60500")
        #expect(try CheckOutcome(.phoneCheck, verdict: verdict) == .notVerified)
    }

    @Test func anAddressNoBearerHoldsEndsWithANamedNegativeCode() async throws {
        let transport = Self.fake()
        let client = Self.client(transport)
        let created = try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        let answer = transport.open(created.checkURL, from: "192.0.2.23")
        let ending = try #require(
            ChainEnding.snaErrorCode.callback(of: trace(ending: answer), checkID: created.checkID))
        #expect(ending.error == "ErrorCode=-31")
        #expect(ending.errorDescription?.contains("Wi-Fi") == true)
        await #expect { try await client.complete(created, ending: nil) } throws: { error in
            (error as? CellpathError)?.message.contains("60510 (SNA failed on the device (e.g. over Wi-Fi))") == true
        }
    }

    @Test func aSecondPendingVerificationOfANumberIsRateLimited() async throws {
        let client = Self.client(Self.fake())
        _ = try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        await #expect { try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions()) } throws: {
            error in
            let error = try #require(error as? CellpathError)
            return error.kind == .temporary && error.message.contains("429") && error.message.contains("60203")
        }
    }

    @Test func aWrongTokenIsAConfigurationErrorNamingTwiliosSettings() async throws {
        await #expect {
            try await Self.client(Self.fake(), token: "wrong").create(
                phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        } throws: { error in
            let error = error as? CellpathError
            return error?.kind == .configuration && error?.hint?.contains("[twilio] account_sid") == true
                && error?.hint?.contains("tru.ID") == false
        }
    }

    @Test(arguments: [
        ("ErrorCode=0&ErrorDescription=Success&Carrier=VZW\n", 0, "VZW"), ("ErrorCode=-33", -33, nil),
        ("ErrorCode=-40&ErrorDescription=Invalid%20number", -40, nil)
    ])
    func theTextEndingIsRead(body: String, code: Int, carrier: String?) throws {
        let ending = try #require(SNAErrorCode(body: body))
        #expect(ending.code == code && ending.carrier == carrier)
        #expect((ending.meaning == nil) == (code == 0))
    }

    @Test func aBodyWithoutAnErrorCodeIsNoEnding() {
        #expect(SNAErrorCode(body: #"{"status":"ok"}"#) == nil)
        #expect(SNAErrorCode(body: "ErrorCode=zero") == nil)
    }
}

/// Vonage Verify v2 silent auth's client against the fake: the workflow, the application JWT
/// (checked with the public key by openssl), Basic auth, the endings and the errors. No root.
struct VonageVerifyClientTests {
    /// A fresh RSA key (PEM) made by openssl in `directory`, and its path.
    static func makeKey(in directory: String) throws -> (JWSKey, String) {
        let path = directory + "/app.key"
        let made = try ProcessRunner.run([
            "openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path
        ])
        #expect(made.status == 0)
        return (try JWSKey.rsa(pem: try FileSystem.read(path), what: "test key"), path)
    }

    /// A fresh RSA key, its file removed.
    static func makeKey() throws -> JWSKey {
        try TemporaryDirectory.with { try makeKey(in: $0).0 }
    }

    static func fake(key: JWSKey?) -> EndpointTransport {
        EndpointTransport(
            FakeVonageVerify(
                configuration: FakeVonageVerify.Configuration(
                    applicationID: "app-1", applicationKey: key, apiKey: "key-1", apiSecret: "secret-1"),
                directory: OneSubscriber()))
    }

    static func client(
        _ transport: EndpointTransport, _ authentication: VonageAuthentication? = nil,
        fallbacks: [VonageChannel] = []
    ) -> VonageVerifyClient {
        let account = VonageVerifyAccount(
            baseURL: "https://api.vonage.test", brand: "Acme",
            authentication: authentication ?? .basic(apiKey: "key-1", apiSecret: "secret-1"))
        return VonageVerifyClient(
            account: account, fallbacks: fallbacks, transport: transport, caFile: nil, timeout: .seconds(5),
            retry: .never)
    }

    @Test func createSendsSilentAuthFirstWithTheFallbacks() async throws {
        let transport = Self.fake(key: nil)
        let created = try await Self.client(transport, fallbacks: [.sms]).create(
            phoneNumber: OneSubscriber.msisdn, options: CheckOptions(referenceID: "ref-1"))
        let request = try #require(transport.requests.first)
        #expect(request.url == "https://api.vonage.test/v2/verify")
        let body = try #require(JSONValue.parse(request.body ?? []))
        #expect(
            body.serialized
                == #"{"brand":"Acme","workflow":[{"channel":"silent_auth","to":"447940448591"},{"channel":"sms","to":"447940448591"}],"client_ref":"ref-1"}"#
        )
        let basic = Data("key-1:secret-1".utf8).base64EncodedString()
        #expect(request.headers.contains(HTTPHeader("Authorization", "Basic \(basic)")))
        #expect(created.checkURL == "https://api.vonage.test/v2/verify/\(created.checkID)/silent-auth/redirect")
    }

    @Test func theApplicationJWTVerifiesWithThePublicKey() throws {
        try TemporaryDirectory.with { directory in
            let (key, path) = try Self.makeKey(in: directory)
            let jwt = VonageVerifyClient.applicationJWT(
                applicationID: "app-1", issuedAt: 1_700_000_000, id: "j-1", sign: { key.sign($0) ?? [] })
            let parts = jwt.split(separator: ".").map(String.init)
            #expect(parts.count == 3)
            let header = try #require(Base64URL.decode(parts[0]).flatMap(JSONValue.parse))
            #expect(header.serialized == #"{"alg":"RS256","typ":"JWT"}"#)
            let claims = try #require(Base64URL.decode(parts[1]).flatMap(JSONValue.parse))
            #expect(
                claims.serialized == #"{"application_id":"app-1","iat":1700000000,"exp":1700000900,"jti":"j-1"}"#)
            try FileSystem.write(Array((parts[0] + "." + parts[1]).utf8), to: directory + "/input")
            try FileSystem.write(try #require(Base64URL.decode(parts[2])), to: directory + "/signature")
            #expect(
                try ProcessRunner.run(["openssl", "pkey", "-in", path, "-pubout", "-out", directory + "/pub"]).status
                    == 0)
            let verified = try ProcessRunner.run([
                "openssl", "dgst", "-sha256", "-verify", directory + "/pub", "-signature", directory + "/signature",
                directory + "/input"
            ])
            #expect(verified.status == 0 && verified.stdout.contains("Verified OK"))
        }
    }

    @Test func theFakeTakesTheApplicationJWTAndTheCodeCompletes() async throws {
        let key = try Self.makeKey()
        let transport = Self.fake(key: key)
        let client = Self.client(transport, .applicationJWT(applicationID: "app-1", sign: { key.sign($0) ?? [] }))
        let created = try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        #expect(transport.requests[0].headers.contains { $0.name == "Authorization" && $0.value.hasPrefix("Bearer ") })
        let ending = ChainEnding.requestIDAndCode.callback(
            of: trace(ending: transport.open(created.checkURL)), checkID: created.checkID)
        #expect(ending?.checkID == created.checkID && ending?.code != nil)
        let verdict = try await client.complete(created, ending: ending)
        #expect(verdict.match == true && verdict.status == "completed")
        #expect(transport.requests.last?.url == "https://api.vonage.test/v2/verify/\(created.checkID)")
    }

    @Test func aJWTOfAnotherKeyIsRefused() async throws {
        let key = try Self.makeKey(), other = try Self.makeKey()
        let client = Self.client(
            Self.fake(key: key), .applicationJWT(applicationID: "app-1", sign: { other.sign($0) ?? [] }))
        await #expect { try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions()) } throws: {
            let error = $0 as? CellpathError
            return error?.kind == .configuration && error?.hint?.contains("[vonage] application_id") == true
                && error?.hint?.contains("tru.ID") == false
        }
    }

    @Test func anEndingOfAnotherRequestIsRefused() async throws {
        let client = Self.client(Self.fake(key: nil))
        let created = try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        await #expect {
            try await client.complete(created, ending: CheckCallback(checkID: "other", code: "1234"))
        } throws: {
            ($0 as? CellpathError)?.message.contains("another request's id") == true
        }
    }

    @Test func anotherNumberIsUserRejected() async throws {
        let transport = Self.fake(key: nil)
        let client = Self.client(transport)
        let created = try await client.create(phoneNumber: "+447700900123", options: CheckOptions())
        let ending = try #require(
            ChainEnding.requestIDAndCode.callback(
                of: trace(ending: transport.open(created.checkURL)), checkID: created.checkID))
        #expect(ending.error == "user_rejected")
        let verdict = try await client.complete(created, ending: ending)
        #expect(try CheckOutcome(.phoneCheck, verdict: verdict) == .notVerified)
    }

    @Test(arguments: [("+990123456780", "completed"), ("+990123456781", "user_rejected"), ("+990123456799", "failed")])
    func virtualOperatorNumbersAnswerByTheirEnding(number: String, expected: String) {
        #expect(FakeVonageVerify.virtualOperatorOutcome(String(number.dropFirst())) == expected)
    }

    @Test func aConcurrentRequestNamesTheOneInProgress() async throws {
        let client = Self.client(Self.fake(key: nil))
        let first = try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        await #expect { try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions()) } throws: {
            let error = try #require($0 as? CellpathError)
            return error.kind == .temporary
                && error.message.contains("already in progress (request_id \(first.checkID))")
        }
    }

    @Test func wrongCodesAreNamedThenTheRequestIsGone() async throws {
        let transport = Self.fake(key: nil)
        let client = Self.client(transport)
        let created = try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        _ = transport.open(created.checkURL)
        let wrong = CheckCallback(checkID: created.checkID, code: "wrong")
        for expected in ["the code is wrong", "the code is wrong", "too many wrong codes", "no such request"] {
            await #expect { try await client.complete(created, ending: wrong) } throws: {
                ($0 as? CellpathError)?.message.contains(expected) == true
            }
        }
    }

    @Test func aCodeBeforeTheCheckURLIsAConflict() async throws {
        let client = Self.client(Self.fake(key: nil))
        let created = try await client.create(phoneNumber: OneSubscriber.msisdn, options: CheckOptions())
        await #expect {
            try await client.complete(created, ending: CheckCallback(checkID: created.checkID, code: "x"))
        } throws: {
            ($0 as? CellpathError)?.message.contains("takes no code") == true
        }
    }

    @Test func aBadNumberIs422() async throws {
        await #expect {
            try await Self.client(Self.fake(key: nil)).create(phoneNumber: "+12", options: CheckOptions())
        } throws: {
            ($0 as? CellpathError)?.message.contains("refused the request's parameters") == true
        }
    }

    @Test func theDeviceLegRulesAreVonagesSDKs() {
        let applied = VonageVerifyClient.deviceLeg.applied(to: FetchRequest(url: "https://x.test", maxHops: 20))
        #expect(applied.maxHops == 10 && applied.hopTimeout == .seconds(5) && applied.strict)
        let header = try? #require(applied.headers.first { $0.name == "x-silentauth-sdk-request" })
        #expect(header.map { UUID(uuidString: $0.value) != nil } == true)
        let again = VonageVerifyClient.deviceLeg.applied(to: FetchRequest(url: "https://x.test"))
        #expect(again.headers != applied.headers)
    }

    @Test func aRedirectURLEndingIsReadFromItsFragment() {
        #expect(ChainEnding.requestIDAndCode.stopsAt("https://app.test/done#request_id=r1&code=c1"))
        #expect(!ChainEnding.requestIDAndCode.stopsAt("https://api.vonage.test/v2/verify/r1/silent-auth/callback"))
    }
}
