import CellpathCore
import FoundationEssentials
import HTTPServer
import SimulatedServices
import SimulatorScenario
import Testing

/// Creates a check and returns (check_id, check_url).
func createCheck(
    _ world: TestWorld, _ token: String, product: String = "subscriber_check", version: String = "v0.2",
    body: String = #"{"phone_number":"+447940448591"}"#
) throws -> (String, String) {
    let response = world.create("/\(product)/\(version)/checks", body, token: token)
    try #require(response.status == 201, "\(response.bodyText)")
    let json = try #require(response.json)
    return (
        try #require(json["check_id"]?.stringValue), try #require(json["_links"]?["check_url"]?["href"]?.stringValue)
    )
}

func patchCode(
    _ world: TestWorld, _ token: String, _ id: String, _ code: String,
    product: String = "subscriber_check", version: String = "v0.2",
    contentType: String = "application/json-patch+json"
) -> HTTPResponse {
    world.send(
        "PATCH", "https://api.truid.test/\(product)/\(version)/checks/\(id)",
        headers: ["Authorization": "Bearer \(token)", "Content-Type": contentType],
        body: #"[{"op":"add","path":"/code","value":"\#(code)"}]"#)
}

func getCheck(
    _ world: TestWorld, _ token: String, _ id: String, product: String = "subscriber_check",
    version: String = "v0.2"
) -> JSONValue? {
    world.send(
        "GET", "https://api.truid.test/\(product)/\(version)/checks/\(id)",
        headers: ["Authorization": "Bearer \(token)"]
    ).json
}

@Suite struct SubscriberCheckV02Tests {
    @Test func createAnswers201HALWithCheckURLAndTTL() throws {
        let world = TestWorld()
        let response = world.create(
            "/subscriber_check/v0.2/checks", #"{"phone_number":"447940448591","reference_id":"ref-1"}"#,
            token: world.token())
        #expect(response.status == 201)
        #expect(response.headers["Content-Type"] == "application/hal+json")
        let json = try #require(response.json)
        let id = try #require(json["check_id"]?.stringValue)
        #expect(json["status"]?.stringValue == "ACCEPTED")
        #expect(json["ttl"]?.intValue == 120)
        #expect(json["reference_id"]?.stringValue == "ref-1")
        #expect(
            json["_links"]?["self"]?["href"]?.stringValue == "https://api.truid.test/subscriber_check/v0.2/checks/\(id)"
        )
        #expect(
            json["_links"]?["check_url"]?["href"]?.stringValue
                == "https://api.truid.test/subscriber_check/v0.2/checks/\(id)/redirect")
        #expect(json["match"] == nil)
        #expect(response.headers["X-RateLimit-Limit"] == "1000")
    }

    @Test func fullChainThroughTheCarrierThenPatchMatches() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, checkURL) = try createCheck(
            world, token, body: #"{"phone_number":"+447940448591","reference_id":"r9"}"#)
        let hops = world.follow(checkURL)
        #expect(hops.map(\.response.status) == [302, 302, 200])
        #expect(hops[1].url.hasPrefix("http://mno.carrier.test/v1/identify/\(id)?return="))
        #expect(hops[2].url.hasPrefix("https://api.truid.test/subscriber_check/v0.2/checks/\(id)/callback?assertion="))
        let last = try #require(hops.last?.response.json)
        #expect(last["check_id"]?.stringValue == id)
        #expect(last["reference_id"]?.stringValue == "r9")
        let code = try #require(last["code"]?.stringValue)
        #expect(getCheck(world, token, id)?["status"]?.stringValue == "PENDING")

        let patched = patchCode(world, token, id, code)
        #expect(patched.status == 200)
        let json = try #require(patched.json)
        #expect(json["status"]?.stringValue == "COMPLETED")
        #expect(json["match"]?.boolValue == true)
        #expect(json["no_sim_change"]?.boolValue == true)
        #expect(json["sim_change_within"] == nil)
        #expect(json["network_id"]?.stringValue == "00101")
        #expect(getCheck(world, token, id)?["match"]?.boolValue == true)

        let again = patchCode(world, token, id, code)
        #expect(again.status == 400)
        #expect(again.json?["detail"]?.stringValue == "Code already used")
    }

    @Test func anotherSubscribersNumberDoesNotMatch() throws {
        let world = TestWorld(sim: SimulatedSIM(msisdn: "+447700900123"))
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        let code = try #require(world.follow(checkURL).last?.response.json?["code"]?.stringValue)
        #expect(patchCode(world, token, id, code).json?["match"]?.boolValue == false)
    }

    @Test func aRecentSIMChangeIsReportedInItsBucket() throws {
        let world = TestWorld(sim: SimulatedSIM(msisdn: TestWorld.msisdn, simChangedMinutesAgo: 30))
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        let code = try #require(world.follow(checkURL).last?.response.json?["code"]?.stringValue)
        let json = try #require(patchCode(world, token, id, code).json)
        #expect(json["match"]?.boolValue == true)
        #expect(json["no_sim_change"]?.boolValue == false)
        #expect(json["sim_change_within"]?.intValue == 60)
        #expect(json["no_sim_change_period"]?.intValue == 10080)
    }

    @Test func periodControlsNoSimChange() throws {
        let world = TestWorld(sim: SimulatedSIM(msisdn: TestWorld.msisdn, simChangedMinutesAgo: 2000))
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token, body: #"{"phone_number":"+447940448591","period":1440}"#)
        let code = try #require(world.follow(checkURL).last?.response.json?["code"]?.stringValue)
        let json = try #require(patchCode(world, token, id, code).json)
        #expect(json["no_sim_change"]?.boolValue == true)
        #expect(json["sim_change_within"]?.intValue == 2880)
        #expect(json["no_sim_change_period"]?.intValue == 1440)
    }

    @Test func redirectURLReceivesCodeAndCheckID() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, checkURL) = try createCheck(
            world, token,
            body: #"{"phone_number":"+447940448591","redirect_url":"https://app.example.test/done?x=1"}"#)
        let hops = world.follow(checkURL, limit: 3)
        let location = try #require(hops.last?.response.headers["Location"])
        #expect(hops.last?.response.status == 302)
        #expect(location.hasPrefix("https://app.example.test/done?x=1&check_id=\(id)&code="))
        let code = String(location.split(separator: "code=")[1])
        #expect(patchCode(world, token, id, code).json?["match"]?.boolValue == true)
    }

    @Test func checkURLFromWiFiIs412NotMobileIP() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        let response = world.send("GET", checkURL, from: TestWorld.wifiAddress)
        #expect(response.status == 412)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(
            response.json?["type"]?.stringValue == "https://developer.tru.id/docs/reference/api-errors#not_mobile_ip")
        #expect(response.json?["title"]?.stringValue == "Precondition Failed")
        let check = try #require(getCheck(world, token, id))
        #expect(check["status"]?.stringValue == "ERROR")
        #expect(check["error_code"]?.stringValue == "not_mobile_ip")
        #expect(check["match"] == nil)
    }

    @Test func checksExpireAfter120Seconds() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        world.clock.advance(seconds: 119)
        #expect(getCheck(world, token, id)?["status"]?.stringValue == "ACCEPTED")
        world.clock.advance(seconds: 1)
        let check = try #require(getCheck(world, token, id))
        #expect(check["status"]?.stringValue == "EXPIRED")
        #expect(check["_links"]?["check_url"] == nil)
        #expect(world.send("GET", checkURL).status == 410)
    }

    @Test func aCodeExchangedAfterTheTTLFindsTheCheckExpired() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        let code = try #require(world.follow(checkURL).last?.response.json?["code"]?.stringValue)
        world.clock.advance(seconds: 121)
        let response = patchCode(world, token, id, code)
        #expect(response.json?["status"]?.stringValue == "EXPIRED")
        #expect(response.json?["match"] == nil)
    }

    @Test func aWrongCodeIsRejectedAndTheRightOneStillWorks() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        #expect(patchCode(world, token, id, "0000").status == 404)  // check_url not opened yet
        let code = try #require(world.follow(checkURL).last?.response.json?["code"]?.stringValue)
        let wrong = patchCode(world, token, id, code + "x")
        #expect(wrong.status == 400)
        #expect(wrong.json?["detail"]?.stringValue == "Invalid code")
        #expect(patchCode(world, token, id, code, contentType: "application/json").status == 415)
        #expect(patchCode(world, token, id, code).status == 200)
    }

    @Test func theChainCannotBeReplayed() throws {
        let world = TestWorld()
        let token = world.token()
        let (_, checkURL) = try createCheck(world, token)
        let hops = world.follow(checkURL)
        #expect(world.send("GET", hops[2].url).status == 409)
        #expect(world.send("GET", checkURL).status == 409)
    }

    @Test func aForgedAssertionErrorsTheCheck() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token)
        #expect(world.send("GET", checkURL).status == 302)
        let response = world.send(
            "GET", "https://api.truid.test/subscriber_check/v0.2/checks/\(id)/callback?assertion=forged")
        #expect(response.json?["error"]?.stringValue == "mno_response_error")
        #expect(response.json?["check_id"]?.stringValue == id)
        #expect(getCheck(world, token, id)?["status"]?.stringValue == "ERROR")
    }

    @Test(arguments: [
        (#"{"phone_number":"07940448591"}"#, "#phone_format_invalid"),
        (#"{"phone_number":"+44abc"}"#, "#phone_format_invalid"),
        (#"{}"#, "#phone_format_invalid"),
        (#"{"phone_number":"+447940448591","period":59}"#, "#bad_request"),
        (#"{"phone_number":"+447940448591","period":"60"}"#, "#bad_request"),
        (#"{"phone_number":"+447940448591","redirect_url":"ftp://x"}"#, "#bad_request"),
        (#"{"phone_number":"+447940448591","reference_id":5}"#, "#bad_request"),
        (#"{"phone_number":"+4479404"#, "#bad_request")
    ])
    func invalidPayloadsAre400(body: String, type: String) {
        let world = TestWorld()
        let response = world.create("/subscriber_check/v0.2/checks", body, token: world.token())
        #expect(response.status == 400)
        #expect(response.json?["type"]?.stringValue?.hasSuffix(type) == true, "\(response.bodyText)")
    }

    @Test func createNeedsJSONContentType() {
        let world = TestWorld()
        let response = world.send(
            "POST", "https://api.truid.test/subscriber_check/v0.2/checks",
            headers: ["Authorization": "Bearer \(world.token())", "Content-Type": "text/plain"],
            body: #"{"phone_number":"+447940448591"}"#)
        #expect(response.status == 415)
    }

    @Test func unknownRoutesAndMethods() {
        let world = TestWorld()
        let token = world.token()
        #expect(world.send("GET", "https://api.truid.test/subscriber_check/v9/checks").status == 404)
        #expect(world.send("GET", "https://api.truid.test/oauth2/v1/token").status == 405)
        #expect(
            world.send(
                "DELETE", "https://api.truid.test/subscriber_check/v0.2/checks/x",
                headers: ["Authorization": "Bearer \(token)"]
            ).status == 405)
        #expect(getCheck(world, token, "no-such-check")?["title"]?.stringValue == "Not Found")
    }
}

@Suite struct SubscriberCheckV01Tests {
    @Test func theLastHopCompletesTheCheck() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, checkURL) = try createCheck(world, token, version: "v0.1")
        #expect(checkURL == "https://api.truid.test/subscriber_check/v0.1/checks/\(id)/redirect")
        let hops = world.follow(checkURL)
        #expect(hops.map(\.response.status) == [302, 302, 200])
        #expect(hops.last?.response.json?["code"] == nil)
        let check = try #require(getCheck(world, token, id, version: "v0.1"))
        #expect(check["status"]?.stringValue == "COMPLETED")
        #expect(check["match"]?.boolValue == true)
        #expect(check["no_sim_change"]?.boolValue == true)
        #expect(patchCode(world, token, id, "x", version: "v0.1").status == 405)
        #expect(patchCode(world, token, id, "x").status == 404)  // not a v0.2 check
    }
}

@Suite struct PhoneCheckTests {
    @Test func v02FlowMatchesWithoutSIMFields() throws {
        let world = TestWorld(sim: SimulatedSIM(msisdn: TestWorld.msisdn, simChangedMinutesAgo: 10))
        let token = world.token("phone_check")
        let (id, checkURL) = try createCheck(world, token, product: "phone_check")
        let code = try #require(world.follow(checkURL).last?.response.json?["code"]?.stringValue)
        let json = try #require(patchCode(world, token, id, code, product: "phone_check").json)
        #expect(json["match"]?.boolValue == true)
        #expect(json["no_sim_change"] == nil)
        #expect(json["sim_change_within"] == nil)
    }

    @Test func v01FlowCompletes() throws {
        let world = TestWorld()
        let token = world.token("phone_check")
        let (id, checkURL) = try createCheck(world, token, product: "phone_check", version: "v0.1")
        _ = world.follow(checkURL)
        let check = try #require(getCheck(world, token, id, product: "phone_check", version: "v0.1"))
        #expect(check["status"]?.stringValue == "COMPLETED")
        #expect(check["match"]?.boolValue == true)
    }

    @Test func aSubscriberCheckIsNotVisibleAsAPhoneCheck() throws {
        let world = TestWorld()
        let token = world.token()
        let (id, _) = try createCheck(world, token)
        #expect(
            getCheck(world, token, id, product: "phone_check")?["type"]?.stringValue?.hasSuffix("#check_not_found")
                == true)
    }
}

@Suite struct SIMCheckTests {
    @Test func aKnownNumberCompletesSynchronously() throws {
        let world = TestWorld(sim: SimulatedSIM(msisdn: TestWorld.msisdn, simChangedMinutesAgo: 5000))
        let token = world.token("sim_check")
        let response = world.create("/sim_check/v0.1/checks", #"{"phone_number":"+447940448591"}"#, token: token)
        #expect(response.status == 201)
        let json = try #require(response.json)
        #expect(json["status"]?.stringValue == "COMPLETED")
        #expect(json["no_sim_change"]?.boolValue == false)
        #expect(json["sim_change_within"]?.intValue == 10080)
        #expect(json["_links"]?["check_url"] == nil)
        let id = try #require(json["check_id"]?.stringValue)
        #expect(getCheck(world, token, id, product: "sim_check", version: "v0.1")?["no_sim_change"]?.boolValue == false)
    }

    @Test func anUnknownNumberIsAnError() throws {
        let world = TestWorld()
        let response = world.create(
            "/sim_check/v0.1/checks", #"{"phone_number":"+447700900999"}"#, token: world.token("sim_check"))
        #expect(response.json?["status"]?.stringValue == "ERROR")
        #expect(response.json?["error_code"]?.stringValue == "mno_user_not_found")
    }
}

@Suite struct CoverageTests {
    @Test func aMobileAddressGetsItsNetwork() throws {
        let world = TestWorld()
        let token = world.token("coverage")
        let response = world.send(
            "GET", "https://api.truid.test/coverage/v0.1/device_ip", headers: ["Authorization": "Bearer \(token)"])
        #expect(response.status == 200)
        let json = try #require(response.json)
        #expect(json["network_id"]?.stringValue == "00101")
        #expect(json["network_name"]?.stringValue == "cellpath sim")
        #expect(json["mobile_data_ip"]?.stringValue == TestWorld.mobileAddress)
        #expect(json["products"]?.arrayValue?.count == 3)
        let other = world.send(
            "GET", "https://api.truid.test/coverage/v0.1/device_ip/100.64.23.9",
            headers: ["Authorization": "Bearer \(token)"]
        ).json
        #expect(other?["network_id"]?.stringValue == "310260")
        #expect(other?["country_code"]?.stringValue == "US")
    }

    @Test func aWiFiAddressIs412() {
        let world = TestWorld()
        let response = world.send(
            "GET", "https://api.truid.test/coverage/v0.1/device_ip",
            headers: ["Authorization": "Bearer \(world.token("coverage"))"], from: TestWorld.wifiAddress)
        #expect(response.status == 412)
        #expect(response.json?["detail"]?.stringValue == "Not a mobile IP")
    }
}

@Suite struct SimChangeWindowTests {
    @Test(arguments: [
        (0, 60), (60, 60), (61, 360), (360, 360), (361, 720), (1441, 2880), (4321, 10080),
        (10081, 43200), (43201, 129600), (259201, 525600), (525600, 525600), (525601, 525601), (900000, 525601)
    ])
    func bucketsFollowTheDocumentedTable(minutes: Int, bucket: Int) {
        #expect(SimChangeWindow(minutesAgo: minutes, period: 10080).simChangeWithin == bucket)
    }

    @Test func noSimChangeComparesAgainstThePeriod() {
        #expect(SimChangeWindow(minutesAgo: 10080, period: 10080).noSimChange == false)
        #expect(SimChangeWindow(minutesAgo: 10081, period: 10080).noSimChange == true)
        #expect(SimChangeWindow(minutesAgo: nil, period: 60) == SimChangeWindow(minutesAgo: nil, period: 540000))
        #expect(SimChangeWindow(minutesAgo: nil, period: 60).noSimChange == true)
    }
}
