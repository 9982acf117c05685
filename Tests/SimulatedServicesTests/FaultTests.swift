import CellpathCore
import FoundationEssentials
import HTTPServer
import SimulatedServices
import SimulatorScenario
import SystemSupport
import Testing

@Suite struct APIFaultTests {
    @Test func serverErrorAnswersEveryRequest() {
        var faults = APIFaults()
        faults.serverErrorStatus = 503
        let world = TestWorld(api: faults)
        for url in [
            "https://api.truid.test/oauth2/v1/token", "https://api.truid.test/subscriber_check/v0.2/checks/x/redirect"
        ] {
            let response = world.send("POST", url)
            #expect(response.status == 503)
            #expect(response.headers["Content-Type"] == "application/problem+json")
        }
    }

    @Test func slowDelaysEveryResponse() {
        var faults = APIFaults()
        faults.slowMs = 750
        let world = TestWorld(api: faults)
        #expect(world.send("GET", "https://api.truid.test/nowhere").delivery == .after(.milliseconds(750)))
        #expect(TestWorld().send("GET", "https://api.truid.test/nowhere").delivery == .immediately)
    }

    @Test func malformedJSONTruncatesCheckCreation() {
        var faults = APIFaults()
        faults.malformedJSON = true
        let world = TestWorld(api: faults)
        let response = world.create(
            "/subscriber_check/v0.2/checks", #"{"phone_number":"+447940448591"}"#, token: world.token())
        #expect(response.status == 201)
        #expect(!response.body.isEmpty)
        #expect(response.json == nil)
    }

    @Test func rateLimitFaultAnswers429WithRetryAfter() {
        var faults = APIFaults()
        faults.rateLimitRetryAfter = 7
        let world = TestWorld(api: faults)
        let response = world.create(
            "/subscriber_check/v0.2/checks", #"{"phone_number":"+447940448591"}"#, token: world.token())
        #expect(response.status == 429)
        #expect(response.headers["Retry-After"] == "7")
        #expect(response.headers["Content-Type"] == "application/problem+json")
    }

    @Test func faultEveryStrikesOnlyEveryNthRequest() {
        var faults = APIFaults()
        faults.serverErrorStatus = 503
        faults.faultEvery = 3
        let served = TestWorld(api: faults)
        let statuses = (1 ... 6).map { _ in served.send("GET", "https://api.truid.test/nowhere").status }
        #expect(statuses == [404, 404, 503, 404, 404, 503])

        faults = APIFaults()
        faults.rateLimitRetryAfter = 0
        faults.faultEvery = 2
        let limited = TestWorld(api: faults)
        let token = limited.token()
        let creations = (1 ... 4).map { _ in
            limited.create("/subscriber_check/v0.2/checks", #"{"phone_number":"+447940448591"}"#, token: token).status
        }
        #expect(creations == [201, 429, 201, 429])
    }

    @Test func theHourlyLimitIsCountedAndReset() {
        let world = TestWorld(rateLimit: 2)
        let token = world.token()
        let body = #"{"phone_number":"+447940448591"}"#
        let first = world.create("/subscriber_check/v0.2/checks", body, token: token)
        #expect(first.headers["X-RateLimit-Limit"] == "2")
        #expect(first.headers["X-RateLimit-Remaining"] == "1")
        #expect(
            world.create("/subscriber_check/v0.2/checks", body, token: token).headers["X-RateLimit-Remaining"] == "0")
        world.clock.advance(seconds: 600)
        let limited = world.create("/subscriber_check/v0.2/checks", body, token: token)
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "3000")
        #expect(limited.headers["X-RateLimit-Remaining"] == "0")
        world.clock.advance(seconds: 3000)
        #expect(world.create("/subscriber_check/v0.2/checks", body, token: world.token()).status == 201)
    }
}

@Suite struct CarrierFaultTests {
    private func chain(
        _ faults: CarrierFaults, cookies: Bool = true, limit: Int = 15
    ) throws -> (TestWorld, String, [Hop]) {
        let world = TestWorld(carrier: faults)
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        return (world, id, world.follow(checkURL, cookies: cookies, limit: limit))
    }

    @Test func timeoutNeverAnswers() throws {
        var faults = CarrierFaults()
        faults.timeout = true
        let (_, _, hops) = try chain(faults)
        #expect(hops.count == 2)
        #expect(hops[1].response.delivery == .never)
    }

    @Test func cookiesAreSetAndRequiredOnTheNextHop() throws {
        var faults = CarrierFaults()
        faults.requireCookies = true
        let (_, _, hops) = try chain(faults)
        #expect(hops[1].response.headers.values(for: "Set-Cookie").count == 2)
        #expect(hops.last?.response.json?["code"] != nil)
        let (_, _, without) = try chain(faults, cookies: false)
        #expect(without.last?.response.status == 403)
        #expect(without.last?.response.json?["type"]?.stringValue?.hasSuffix("#session_required") == true)
    }

    @Test func relativeLocationWithAQueryResolvesAgainstTheCurrentPath() throws {
        var faults = CarrierFaults()
        faults.relativeLocation = true
        let (_, id, hops) = try chain(faults)
        let location = try #require(hops[1].response.headers["Location"])
        #expect(location.hasPrefix("\(id)?return="))
        #expect(hops[2].url.hasPrefix("http://mno.carrier.test/v1/identify/\(id)?return="))
        #expect(hops.last?.response.json?["code"] != nil)
    }

    @Test(arguments: [1, 3, 6])
    func extraHopsStayInsideTheCarrier(extra: Int) throws {
        var faults = CarrierFaults()
        faults.extraHops = extra
        let (_, _, hops) = try chain(faults)
        #expect(hops.filter { $0.url.hasPrefix("http://mno.carrier.test/") }.count == extra + 1)
        #expect(hops.count == extra + 3)
        #expect(hops.last?.response.json?["code"] != nil)
    }

    @Test func aRedirectLoopNeverIdentifies() throws {
        var faults = CarrierFaults()
        faults.redirectLoop = true
        let (_, _, hops) = try chain(faults, limit: 12)
        #expect(hops.count == 12)
        #expect(hops.allSatisfy { $0.response.status == 302 })
        #expect(Set(hops.dropFirst(2).map(\.url)).count == 2)  // alternates between two carrier URLs
    }

    @Test func httpsDowngradeSendsTheLastHopOverPlainHTTP() throws {
        var faults = CarrierFaults()
        faults.httpsDowngrade = true
        let (_, id, hops) = try chain(faults)
        #expect(hops.last?.url.hasPrefix("http://api.truid.test/subscriber_check/v0.2/checks/\(id)/callback") == true)
        #expect(hops.last?.response.json?["code"] != nil)
    }

    @Test func anAddressWithoutASubscriberReturnsAnError() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        #expect(world.send("GET", checkURL).status == 302)
        let back = "https://api.truid.test/subscriber_check/v0.2/checks/\(id)/callback"
        let carrierHop = world.follow("http://mno.carrier.test/v1/identify/\(id)?return=\(back)", from: "100.64.23.77")
        #expect(carrierHop.last?.response.json?["error"]?.stringValue == "mno_user_not_found")
        #expect(getCheck(world, token, id)?["error_code"]?.stringValue == "mno_user_not_found")
    }

    @Test func returnMustPointIntoTheAPI() {
        let world = TestWorld()
        let response = world.send("GET", "http://mno.carrier.test/v1/identify/abc?return=https://evil.test/x")
        #expect(response.status == 400)
        #expect(world.send("GET", "http://mno.carrier.test/other").status == 404)
    }
}

@Suite struct RequestLogTests {
    @Test func linesCarryTheFieldsAndRedactSecrets() throws {
        let request = TestWorld.request(
            "GET", "https://api.truid.test/x/callback?assertion=s3cr3t&code=c0de&hop=2&return=https://a/b",
            from: "100.64.23.2")
        let line = RequestLog.line(
            time: 0, namespace: "cp-inet", request: request, status: 302)
        #expect(!line.contains("s3cr3t"))
        #expect(!line.contains("c0de"))
        #expect(!line.contains("\n"))
        let json = try #require(JSONValue.parse(Array(line.utf8)))
        #expect(json["time"]?.stringValue == "1970-01-01T00:00:00.000Z")
        #expect(json["namespace"]?.stringValue == "cp-inet")
        #expect(json["source"]?.stringValue == "100.64.23.2")
        #expect(json["method"]?.stringValue == "GET")
        #expect(json["status"]?.intValue == 302)
        #expect(
            json["path"]?.stringValue
                == "/x/callback?assertion=[redacted]&code=[redacted]&hop=2&return=https%3A%2F%2Fa%2Fb")
        let unanswered = RequestLog.line(time: WallClock.now, namespace: "cp-carrier", request: request, status: nil)
        #expect(JSONValue.parse(Array(unanswered.utf8))?["status"] == .null)
        #expect(json["x_tru_ops"] == nil)
        var withOperators = request
        withOperators.headers.add("X-Tru-Ops", "00101,23415")
        let sent = RequestLog.line(time: 0, namespace: "cp-inet", request: withOperators, status: 302)
        #expect(JSONValue.parse(Array(sent.utf8))?["x_tru_ops"]?.stringValue == "00101,23415")
    }
}
