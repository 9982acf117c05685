import CellpathCore
import CellularHTTP
import HTTPServer
import SimulatedServices
import SimulatorScenario
import Synchronization
import TestSupport
import Testing

@testable import CAMARA

/// Subscribers with known SIM changes: one an hour and a half ago, one 20 days ago, one never.
struct SIMChangeDirectory: SubscriberDirectory {
    static let recent = "+447940448591", older = "+447940448592", never = "+447940448593"
    let sims = [
        SimulatedSIM(msisdn: recent, simChangedMinutesAgo: 90),
        SimulatedSIM(msisdn: older, simChangedMinutesAgo: 20 * 24 * 60),
        SimulatedSIM(msisdn: never)
    ]

    func subscriber(holding address: String) -> SimulatedSIM? { nil }
    func subscriber(msisdn: String) -> SimulatedSIM? { sims.first { $0.msisdn == msisdn } }
    func network(holding address: String) -> SimulatedNetwork? { nil }
}

/// SIM Swap v2 with a client-credentials token against the fake operator in process.
@Suite(.ownThreads)
struct CAMARASimSwapTests {
    static func client() async throws -> (CAMARAClient, OperatorTransport) {
        let transport = try OperatorTransport(key: try await makeClientKey(.es256), directory: SIMChangeDirectory())
        return (transport.client(), transport)
    }

    @Test func theCheckAnswersAgainstMaxAge() async throws {
        let (client, transport) = try await Self.client()
        #expect(try await client.simSwapped(phoneNumber: SIMChangeDirectory.recent, maxAge: 2))
        #expect(try await !client.simSwapped(phoneNumber: SIMChangeDirectory.recent, maxAge: 1))
        #expect(try await !client.simSwapped(phoneNumber: SIMChangeDirectory.older, maxAge: nil))
        #expect(try await client.simSwapped(phoneNumber: SIMChangeDirectory.older, maxAge: 2400))
        #expect(try await !client.simSwapped(phoneNumber: SIMChangeDirectory.never, maxAge: 2400))
        // One client-credentials token served every call.
        #expect(transport.requests.filter { $0.url.hasSuffix("/oauth2/token") }.count == 1)
        let check = try #require(transport.requests.last)
        #expect(check.url == OperatorTransport.baseURL + "/sim-swap/v2/check")
        #expect(String(decoding: check.body ?? [], as: UTF8.self) == #"{"phoneNumber":"+447940448593","maxAge":2400}"#)
    }

    @Test func theDateIsTheLatestChangeOrTheMonitoredPeriod() async throws {
        let (client, _) = try await Self.client()
        let recent = try await client.simSwapDate(phoneNumber: SIMChangeDirectory.recent)
        #expect(recent.latestSimChange?.hasSuffix("Z") == true && recent.monitoredPeriod == nil)
        let never = try await client.simSwapDate(phoneNumber: SIMChangeDirectory.never)
        #expect(never == SimSwapDate(latestSimChange: nil, monitoredPeriod: FakeCAMARAOperator.monitoredDays))
    }

    @Test func anUnknownNumberIsNotFound() async throws {
        let (client, _) = try await Self.client()
        let error = await #expect(throws: CAMARAError.self) {
            _ = try await client.simSwapped(phoneNumber: "+447700900123", maxAge: nil)
        }
        guard case .api(404, "IDENTIFIER_NOT_FOUND"?, _)? = error else {
            Issue.record("expected IDENTIFIER_NOT_FOUND, got \(String(describing: error))")
            return
        }
    }

    @Test(arguments: [("+447940448591", 0), ("+447940448591", 2401), ("447940448591", 24), ("+0123456", 24)])
    func badInputIsRefusedBeforeAnyRequest(_ number: String, _ maxAge: Int) async throws {
        let (client, transport) = try await Self.client()
        let error = await #expect(throws: CAMARAError.self) {
            _ = try await client.simSwapped(phoneNumber: number, maxAge: maxAge)
        }
        #expect(error?.cellpathError(of: CAMARANumberVerificationTests.endpoint).kind == .dataError)
        #expect(error?.cellpathError(of: CAMARANumberVerificationTests.endpoint).message.contains(number) == false)
        #expect(transport.requests.isEmpty)
    }

    @Test func transientFailuresAreRetriedWithAFreshAssertion() async throws {
        let (client, transport) = try await Self.client()
        transport.fail([503, 429], at: "/.well-known/openid-configuration")
        transport.fail([502], at: "/oauth2/token")
        #expect(try await client.simSwapped(phoneNumber: SIMChangeDirectory.recent, maxAge: 2))
        let requests = transport.requests
        #expect(requests.filter { $0.url.hasSuffix("/openid-configuration") }.count == 3)
        let tokens = requests.filter { $0.url.hasSuffix("/oauth2/token") }
        #expect(tokens.count == 2)
        #expect(tokens.map(\.body).count == 2 && tokens[0].body != tokens[1].body)
    }

    @Test(arguments: [[501], [500, 500, 500]])
    func aFailureIsReturnedWhenItIsNotTransientOrKeepsFailing(_ statuses: [Int]) async throws {
        let (client, transport) = try await Self.client()
        transport.fail(statuses, at: "/sim-swap/v2/check")
        let error = await #expect(throws: CAMARAError.self) {
            _ = try await client.simSwapped(phoneNumber: SIMChangeDirectory.recent, maxAge: nil)
        }
        #expect(error == .api(status: statuses[0], code: "UNAVAILABLE", message: "scripted"))
        #expect(transport.requests.filter { $0.url.hasSuffix("/sim-swap/v2/check") }.count == statuses.count)
    }
}

/// Vonage's SIM Swap: a CIBA token for the number, polled while the operator says
/// `authorization_pending`, then the call with it.
@Suite struct CIBATokenTests {
    /// Answers bc-authorize, then `pending` pending answers of the token endpoint, then a token,
    /// then SIM Swap's check; records what was asked.
    final class ScriptedOperator: CAMARATransport {
        let pending: Int
        let asked = Mutex<[(url: String, body: String)]>([])
        init(pending: Int) { self.pending = pending }

        /// CIBA's endpoints are known: nothing is looked up ahead of a code exchange here.
        func resolveAhead(_ url: String) {}

        func send(_ request: HTTPClientRequest) async throws(FetchFailure) -> HTTPClientResponse {
            let body = String(decoding: request.body ?? [], as: UTF8.self)
            let count = asked.withLock {
                $0.append((request.url, body))
                return $0.filter { $0.url.hasSuffix("/oauth2/token") }.count
            }
            func answer(_ status: Int, _ json: String) -> HTTPResponse {
                HTTPResponse(status: status, contentType: "application/json", body: json)
            }
            let response: HTTPResponse
            if request.url.hasSuffix("/oauth2/bc-authorize") {
                response = answer(200, #"{"auth_req_id":"req-1","expires_in":120,"interval":2}"#)
            } else if request.url.hasSuffix("/oauth2/token") {
                response =
                    count <= pending
                    ? answer(400, #"{"error":"authorization_pending"}"#)
                    : answer(200, #"{"access_token":"token-1","expires_in":300}"#)
            } else {
                response = answer(200, #"{"swapped":true}"#)
            }
            return FakeAPITransport.clientResponse(response)
        }
    }

    /// The pauses the client took.
    final class Pauses: Sendable {
        let taken = Mutex<[Duration]>([])
    }

    static func client(_ transport: ScriptedOperator, pauses: Pauses) -> CAMARAClient {
        let base = "https://api-eu.vonage.example"
        return CAMARAClient(
            endpoint: CAMARAEndpoint(
                apiRoot: base, issuer: base, clientID: "app-1",
                authentication: .vonageApplication(.basic(apiKey: "k", apiSecret: "s")),
                metadata: ProviderMetadata(
                    issuer: base, authorizationEndpoint: base + "/oauth2/auth", tokenEndpoint: base + "/oauth2/token",
                    backchannelAuthenticationEndpoint: base + "/oauth2/bc-authorize")),
            transport: transport, pause: { duration in pauses.taken.withLock { $0.append(duration) } })
    }

    @Test func aPendingAuthenticationIsPolledAtItsInterval() async throws {
        let transport = ScriptedOperator(pending: 2)
        let pauses = Pauses()
        let swapped = try await Self.client(transport, pauses: pauses).simSwapped(
            phoneNumber: "+447940448591", maxAge: 24, api: .vonage)
        #expect(swapped)
        let asked = transport.asked.withLock { $0 }
        #expect(
            asked.map { $0.url.split(separator: "/").suffix(2).joined(separator: "/") } == [
                "oauth2/bc-authorize", "oauth2/token", "oauth2/token", "oauth2/token", "v040/check"
            ])
        #expect(asked[0].body.contains("login_hint=%2B447940448591"), "\(asked[0].body)")
        #expect(asked[0].body.contains("scope=dpv%3AFraudPreventionAndDetection%23check-sim-swap"), "\(asked[0].body)")
        #expect(asked[1].body.contains("grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&auth_req_id=req-1"))
        #expect(pauses.taken.withLock { $0 } == [.seconds(2), .seconds(2)])
    }

    @Test func anAuthenticationStillPendingAfterThePollsIsItsError() async throws {
        let transport = ScriptedOperator(pending: 100)
        let pauses = Pauses()
        let error = await #expect(throws: CAMARAError.self) {
            _ = try await Self.client(transport, pauses: pauses).simSwapped(
                phoneNumber: "+447940448591", maxAge: nil, api: .vonage)
        }
        #expect(error == .api(status: 400, code: "authorization_pending", message: nil))
        #expect(
            transport.asked.withLock { $0 }.filter { $0.url.hasSuffix("/oauth2/token") }.count == CAMARAClient.cibaPolls
        )
    }
}
