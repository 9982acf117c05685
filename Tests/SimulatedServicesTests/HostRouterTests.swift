import HTTPServer
import SimulatedServices
import Testing

/// The fake APIs that share the API's address are told apart by `Host` (its port ignored, any
/// case); any other name is the fake tru.ID API's.
struct HostRouterTests {
    /// An endpoint that answers with its own name.
    struct Named: SimulatedHTTPEndpoint {
        let name: String
        func handle(_ request: HTTPRequest) -> HTTPResponse {
            HTTPResponse(status: 200, contentType: "text/plain", body: name)
        }
    }

    static let router = HostRouter(
        fallback: Named(name: "truid"),
        byHost: ["verify.twilio.test": Named(name: "twilio"), "api.vonage.test": Named(name: "vonage")])

    static func answer(host: String?) -> String {
        let headers: HTTPHeaders = host.map { ["Host": $0] } ?? [:]
        return router.handle(
            HTTPRequest(
                method: "GET", path: "/", queryItems: [], headers: headers, body: [], remoteAddress: "192.0.2.23",
                isTLS: true)
        ).bodyText
    }

    @Test(arguments: [
        ("verify.twilio.test", "twilio"), ("verify.twilio.test:443", "twilio"), ("API.Vonage.test", "vonage"),
        ("api.truid.test", "truid"), ("203.0.113.10", "truid")
    ])
    func eachHostReachesItsFake(host: String, expected: String) {
        #expect(Self.answer(host: host) == expected)
    }

    @Test func noHostIsTheTruIDAPIs() {
        #expect(Self.answer(host: nil) == "truid")
    }
}
