import CellpathCore
import FoundationEssentials
import HTTPServer
import SimulatedServices
import SimulatorScenario
import Testing

/// The points where the fake API follows tru.ID's published API definitions (docs/simulator-api.md).

/// Sends an authenticated GET.
private func get(
    _ world: TestWorld, _ path: String, token: String, from address: String = TestWorld.mobileAddress
) -> HTTPResponse {
    world.send("GET", "https://api.truid.test\(path)", headers: ["Authorization": "Bearer \(token)"], from: address)
}

/// Requests a token for `scope` (form-encoded as given) and returns the response.
private func tokenResponse(_ world: TestWorld, scope: String) -> HTTPResponse {
    let basic = Data("\(TestWorld.clientID):\(TestWorld.clientSecret)".utf8).base64EncodedString()
    return world.send(
        "POST", "https://api.truid.test/oauth2/v1/token",
        headers: ["Authorization": "Basic \(basic)", "Content-Type": "application/x-www-form-urlencoded"],
        body: "grant_type=client_credentials&scope=\(scope)")
}

@Suite struct ScopeTests {
    @Test func moCheckIsGrantedWithTheDevServersScopes() throws {
        let response = tokenResponse(
            TestWorld(), scope: "phone_check%20sim_check%20subscriber_check%20mo_check%20coverage")
        #expect(response.status == 200)
        #expect(response.json?["scope"]?.stringValue == "phone_check sim_check subscriber_check mo_check coverage")
    }

    @Test(arguments: ["console", "subscriber_check%20unknown", "SUBSCRIBER_CHECK"])
    func anUnknownScopeRefusesTheWholeRequest(scope: String) throws {
        let response = tokenResponse(TestWorld(), scope: scope)
        #expect(response.status == 400)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let json = try #require(response.json)
        #expect(json["type"]?.stringValue == "https://developer.tru.id/docs/reference/api-errors#invalid_scope")
        #expect(json["error"]?.stringValue == "invalid_scope")
        #expect(json["error_description"]?.stringValue?.hasPrefix("Unknown scope") == true)
    }

    @Test func wrongCredentialsAreUnauthorizedAndInvalidClient() throws {
        let world = TestWorld()
        let response = world.send(
            "POST", "https://api.truid.test/oauth2/v1/token",
            headers: [
                "Authorization": "Basic \(Data("x:y".utf8).base64EncodedString())",
                "Content-Type": "application/x-www-form-urlencoded"
            ],
            body: "grant_type=client_credentials&scope=coverage")
        #expect(response.status == 401)
        #expect(response.json?["error"]?.stringValue == "invalid_client")
        #expect(response.json?["type"]?.stringValue?.hasSuffix("#unauthorized") == true)
    }
}

@Suite struct RateLimitHeaderTests {
    @Test func resetIsTheEndOfTheHourWindowInEpochSeconds() throws {
        let world = TestWorld(rateLimit: 5)
        let token = world.token()
        let start = Int(world.clock.clock.now())
        let first = get(world, "/coverage/v0.1/device_ip", token: token)
        #expect(first.headers["X-RateLimit-Reset"] == String(start + 3600))
        world.clock.advance(seconds: 100)
        let later = get(world, "/coverage/v0.1/device_ip", token: token)
        #expect(later.headers["X-RateLimit-Reset"] == String(start + 3600))
        #expect(later.headers["X-RateLimit-Remaining"] == "3")
        world.clock.advance(seconds: 3500)  // a new window (and a new token: the first one has expired)
        #expect(
            get(world, "/coverage/v0.1/device_ip", token: world.token()).headers["X-RateLimit-Reset"]
                == String(start + 7200))
    }

    @Test func errorsOfAuthenticatedRequestsCarryTheHeadersToo() {
        let world = TestWorld()
        let response = get(world, "/subscriber_check/v0.2/checks/nope", token: world.token())
        #expect(response.status == 404)
        #expect(response.headers["X-RateLimit-Reset"] != nil)
    }

    @Test func unlimitedNeverAnswers429AndSendsNoLimitHeaders() {
        let world = TestWorld(rateLimit: nil)
        let token = world.token()
        var statuses: Set<Int> = []
        for _ in 0 ..< 1200 { statuses.insert(get(world, "/coverage/v0.1/device_ip", token: token).status) }
        #expect(statuses == [200])
        let response = get(world, "/coverage/v0.1/device_ip", token: token)
        #expect(response.headers["X-RateLimit-Limit"] == nil)
        #expect(response.headers["X-RateLimit-Reset"] == nil)
    }

    @Test func theLimitIsTheConfiguredOne() {
        let world = TestWorld(rateLimit: 3)
        let token = world.token()
        let statuses = (0 ..< 4).map { _ in get(world, "/coverage/v0.1/device_ip", token: token).status }
        #expect(statuses == [200, 200, 200, 429])
    }
}

@Suite struct PublishedCoverageTests {
    @Test func deviceIPsIsThePublishedPathAndAnswersHAL() throws {
        let world = TestWorld()
        let token = world.token("coverage")
        let response = get(
            world, "/coverage/v0.1/device_ips/\(TestWorld.otherAddress)", token: token, from: TestWorld.wifiAddress)
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/hal+json")
        #expect(response.headers["X-RateLimit-Limit"] == "1000")
        #expect(response.headers["Access-Control-Allow-Origin"] == "*")
        let json = try #require(response.json)
        #expect(json["network_id"]?.stringValue == "310260")
        #expect(json["country_code"]?.stringValue == "US")
        let wifi = get(world, "/coverage/v0.1/device_ips/\(TestWorld.wifiAddress)", token: token)
        #expect(wifi.status == 412)
        #expect(wifi.headers["Content-Type"] == "application/problem+json")
        let bad = get(world, "/coverage/v0.1/device_ips/not-an-ip", token: token)
        #expect(bad.status == 400)
        #expect(bad.headers["Content-Type"] == "application/problem+json")
    }

    @Test func theTestNetworksCountryIsItsSIMsCountry() throws {
        let world = TestWorld()
        let json = try #require(get(world, "/coverage/v0.1/device_ip", token: world.token("coverage")).json)
        #expect(json["network_id"]?.stringValue == "00101")
        #expect(json["country_code"]?.stringValue == "GB")
    }

    @Test(arguments: ["GB", "gb", "44"])
    func aCountryListsTheWorldsOperatorsThere(code: String) throws {
        let world = TestWorld()
        let response = get(world, "/coverage/v0.1/countries/\(code)", token: world.token("coverage"))
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/hal+json")
        #expect(response.headers["Access-Control-Allow-Origin"] == "*")
        let json = try #require(response.json)
        #expect(json["country_code"]?.stringValue == "GB")
        #expect(json["dialing_code"]?.intValue == 44)
        let products = try #require(json["products"]?.arrayValue)
        #expect(Set(products.compactMap { $0["product_id"]?.stringValue }) == ["PCK", "SUK", "SCK"])
        for product in products {
            #expect(product["networks"]?.arrayValue?.compactMap { $0["network_id"]?.stringValue } == ["00101"])
            #expect(product["coverage"]?.stringValue == "FULL")
        }
        #expect(
            json["_links"]?["self"]?["href"]?.stringValue == "https://api.truid.test/coverage/v0.1/countries/\(code)")
    }

    @Test func aCountryWithoutOperatorsIs404ProblemJSON() throws {
        let world = TestWorld()
        let token = world.token("coverage")
        #expect(
            get(world, "/coverage/v0.1/countries/US", token: token).json?["products"]?.arrayValue?.first?["networks"]?
                .arrayValue?.first?["network_id"]?.stringValue == "310260")
        let response = get(world, "/coverage/v0.1/countries/FR", token: token)
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.json?["type"]?.stringValue?.hasSuffix("#not_found") == true)
    }

    @Test func coverageNeedsTheCoverageScope() {
        let world = TestWorld()
        #expect(get(world, "/coverage/v0.1/countries/GB", token: world.token("subscriber_check")).status == 403)
        #expect(
            world.send(
                "POST", "https://api.truid.test/coverage/v0.1/countries/GB",
                headers: ["Authorization": "Bearer \(world.token("coverage"))"]
            ).status == 405)
    }
}

@Suite struct PatchBeforeCheckURLTests {
    @Test func patchBeforeCheckURLWasOpenedIs404() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, _) = try createCheck(world, token)
        let response = patchCode(world, token, id, "0123456789abcdef")
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.json?["type"]?.stringValue?.hasSuffix("#check_not_found") == true)
        #expect(getCheck(world, token, id)?["status"]?.stringValue == "ACCEPTED")
    }

    @Test func completedChecksAreHAL() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        let code = try #require(world.follow(checkURL).last?.response.json?["code"]?.stringValue)
        let patched = patchCode(world, token, id, code)
        #expect(patched.status == 200)
        #expect(patched.headers["Content-Type"] == "application/hal+json")
        let fetched = world.send(
            "GET", "https://api.truid.test/subscriber_check/v0.2/checks/\(id)",
            headers: ["Authorization": "Bearer \(token)"])
        #expect(fetched.headers["Content-Type"] == "application/hal+json")
    }
}

@Suite struct SandboxTests {
    private func sandboxWorld() -> TestWorld {
        var api = APIFaults()
        api.sandbox = true
        return TestWorld(api: api)
    }

    /// Runs a v0.2 SubscriberCheck for `number` from the device (whose SIM is +447940448591) to the end.
    private func check(_ world: TestWorld, _ number: String) throws -> JSONValue {
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token, body: #"{"phone_number":"\#(number)"}"#)
        let last = try #require(world.follow(checkURL).last?.response.json)
        if let code = last["code"]?.stringValue { return try #require(patchCode(world, token, id, code).json) }
        return try #require(getCheck(world, token, id))
    }

    @Test(arguments: ["+447700900120", "+447700900122", "+447700900998"])
    func anEvenLastDigitMatchesWhateverTheSIM(number: String) throws {
        let result = try check(sandboxWorld(), number)
        #expect(result["status"]?.stringValue == "COMPLETED")
        #expect(result["match"]?.boolValue == true)
        #expect(result["no_sim_change"]?.boolValue == true)
    }

    @Test(arguments: ["+447940448591", "+447700900123"])
    func anOddLastDigitDoesNotMatchEvenForTheSIMsOwnNumber(number: String) throws {
        let result = try check(sandboxWorld(), number)
        #expect(result["status"]?.stringValue == "COMPLETED")
        #expect(result["match"]?.boolValue == false)
        #expect(result["no_sim_change"]?.boolValue == false)
    }

    @Test func endingIn99IsAnError() throws {
        let result = try check(sandboxWorld(), "+447700900199")
        #expect(result["status"]?.stringValue == "ERROR")
        #expect(result["error_code"]?.stringValue == "mno_server_error")
    }

    @Test func withoutSandboxTheSIMDecides() throws {
        #expect(try check(TestWorld(), "+447700900122")["match"]?.boolValue == false)
        #expect(try check(TestWorld(), TestWorld.msisdn)["match"]?.boolValue == true)
    }

    @Test func simCheckFollowsTheRulesForAnyNumber() throws {
        let world = sandboxWorld()
        let token = world.token("sim_check")
        let even = world.create("/sim_check/v0.1/checks", #"{"phone_number":"+447700900124"}"#, token: token).json
        #expect(even?["status"]?.stringValue == "COMPLETED")
        #expect(even?["no_sim_change"]?.boolValue == true)
        let odd = world.create("/sim_check/v0.1/checks", #"{"phone_number":"+447700900125"}"#, token: token).json
        #expect(odd?["no_sim_change"]?.boolValue == false)
        #expect(odd?["sim_change_within"]?.intValue == 60)
        let error = world.create("/sim_check/v0.1/checks", #"{"phone_number":"+447700900199"}"#, token: token).json
        #expect(error?["status"]?.stringValue == "ERROR")
    }
}

@Suite struct CheckURLErrorTests {
    @Test func aModemsNetworkCanRefuseCheckURLWith400MNONotSupported() throws {
        let world = TestWorld(network: SimulatedNetwork(checkURLError: .mnoNotSupported))
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        let response = world.send("GET", checkURL)
        #expect(response.status == 400)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(
            response.json?["type"]?.stringValue
                == "https://developer.tru.id/docs/reference/api-errors#mno_not_supported")
        let check = getCheck(world, token, id)
        #expect(check?["status"]?.stringValue == "ERROR")
        #expect(check?["error_code"]?.stringValue == "mno_not_supported")
    }

    @Test func anOperatorCanRefuseCheckURLWith501RedirectUnsupported() throws {
        var api = APIFaults()
        api.checkURLErrors = [OperatorCheckURLError(operator: "310-260", error: .mnoRedirectUnsupported)]
        let world = TestWorld(api: api)
        let token = world.token()
        let (_, refused) = try createCheck(world, token, body: #"{"phone_number":"+15550001111"}"#)
        let response = world.send("GET", refused, from: TestWorld.otherAddress)
        #expect(response.status == 501)
        #expect(response.json?["type"]?.stringValue?.hasSuffix("#mno_redirect_unsupported") == true)
        // Another operator's device is not affected.
        let (_, allowed) = try createCheck(world, token)
        #expect(world.send("GET", allowed).status == 302)
    }
}
