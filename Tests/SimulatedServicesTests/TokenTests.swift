import FoundationEssentials
import HTTPServer
import SimulatedServices
import Testing

@Suite struct TokenTests {
    private func tokenRequest(
        _ world: TestWorld, id: String = TestWorld.clientID, secret: String = TestWorld.clientSecret,
        body: String = "grant_type=client_credentials&scope=subscriber_check%20coverage",
        contentType: String = "application/x-www-form-urlencoded"
    ) -> HTTPResponse {
        let basic = Data("\(id):\(secret)".utf8).base64EncodedString()
        return world.send(
            "POST", "https://api.truid.test/oauth2/v1/token",
            headers: ["Authorization": "Basic \(basic)", "Content-Type": contentType], body: body)
    }

    @Test func clientCredentialsGrantIssuesAnHourLongBearerToken() throws {
        let response = tokenRequest(TestWorld())
        #expect(response.status == 200)
        let json = try #require(response.json)
        #expect(json["token_type"]?.stringValue == "bearer")
        #expect(json["expires_in"]?.intValue == 3600)
        #expect(json["scope"]?.stringValue == "subscriber_check coverage")
        #expect((json["access_token"]?.stringValue?.count ?? 0) >= 32)
    }

    @Test(arguments: [("cp-client", "wrong"), ("someone", "cp-secret")])
    func wrongCredentialsAre401ProblemJSON(id: String, secret: String) throws {
        let response = tokenRequest(TestWorld(), id: id, secret: secret)
        #expect(response.status == 401)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.json?["type"]?.stringValue?.hasSuffix("#unauthorized") == true)
        #expect(response.json?["title"]?.stringValue == "Unauthorized")
        #expect(response.headers["WWW-Authenticate"]?.hasPrefix("Basic") == true)
    }

    @Test func missingAuthorizationIs401() {
        let world = TestWorld()
        let response = world.send(
            "POST", "https://api.truid.test/oauth2/v1/token",
            headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: "grant_type=client_credentials&scope=coverage")
        #expect(response.status == 401)
    }

    @Test(arguments: [
        "grant_type=password&scope=coverage", "grant_type=client_credentials",
        "grant_type=client_credentials&scope=coverage+teleport", "grant_type=client_credentials&scope=%zz"
    ])
    func badFormsAre400(body: String) {
        let response = tokenRequest(TestWorld(), body: body)
        #expect(response.status == 400)
        #expect(response.headers["Content-Type"] == "application/problem+json")
    }

    @Test func aJSONBodyIsRejected() {
        #expect(tokenRequest(TestWorld(), body: "{}", contentType: "application/json").status == 400)
    }

    @Test func tokensExpireAfterAnHour() {
        let world = TestWorld()
        let token = world.token("coverage")
        let url = "https://api.truid.test/coverage/v0.1/device_ip"
        #expect(world.send("GET", url, headers: ["Authorization": "Bearer \(token)"]).status == 200)
        world.clock.advance(seconds: 3599)
        #expect(world.send("GET", url, headers: ["Authorization": "Bearer \(token)"]).status == 200)
        world.clock.advance(seconds: 1)
        let expired = world.send("GET", url, headers: ["Authorization": "Bearer \(token)"])
        #expect(expired.status == 401)
        #expect(expired.json?["detail"]?.stringValue == "Access token expired")
    }

    @Test func aTokenWithoutTheProductScopeIs403() {
        let world = TestWorld()
        let token = world.token("coverage")
        let response = world.create("/subscriber_check/v0.2/checks", #"{"phone_number":"+447940448591"}"#, token: token)
        #expect(response.status == 403)
        #expect(
            world.create("/subscriber_check/v0.2/checks", #"{"phone_number":"+447940448591"}"#, token: "nope").status
                == 401)
    }
}
