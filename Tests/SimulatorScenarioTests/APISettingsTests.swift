import CellpathCore
import SimulatorScenario
import Testing

/// The scenario's fake-API settings: rate limit, sandbox, callback_url, check_url refusals.
@Suite struct APISettingsTests {
    @Test func defaultsAreTheLiveProjectWithTheHourlyLimit() throws {
        let api = try decode("{}").api
        #expect(api.rateLimitPerHour == 1000)
        #expect(api.sandbox == false)
        #expect(api.callbackURL == nil)
        #expect(api.checkURLErrors.isEmpty)
        #expect(try decode("{}").modems[0].network.checkURLError == nil)
    }

    @Test func everySettingIsRead() throws {
        let scenario = try decode(
            #"""
            {"api": {"rateLimitPerHour": null, "sandbox": true, "callbackURL": "http://192.0.2.23:8080/callback",
                     "checkURLErrors": [{"operator": "310-260", "error": "mnoRedirectUnsupported"}]},
             "modems": [{"network": {"checkURLError": "mnoNotSupported"}}]}
            """#)
        #expect(scenario.api.rateLimitPerHour == nil)
        #expect(scenario.api.sandbox)
        #expect(scenario.api.callbackURL == "http://192.0.2.23:8080/callback")
        #expect(
            scenario.api.checkURLErrors == [OperatorCheckURLError(operator: "310-260", error: .mnoRedirectUnsupported)])
        #expect(scenario.modems[0].network.checkURLError == .mnoNotSupported)
        #expect(try decode(#"{"api": {"rateLimitPerHour": 5}}"#).api.rateLimitPerHour == 5)
    }

    @Test func unlimitedSurvivesTheDaemonsCopy() throws {
        var scenario = Scenario.builtIn
        scenario.api.rateLimitPerHour = nil
        scenario.api.sandbox = true
        scenario.api.callbackURL = "http://192.0.2.23/hook"
        scenario.api.checkURLErrors = [OperatorCheckURLError(operator: "001-01", error: .mnoNotSupported)]
        scenario.modems[0].network.checkURLError = .mnoRedirectUnsupported
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
    }

    @Test(arguments: [
        (#"{"api": {"rateLimitPerHour": 0}}"#, "api.rateLimitPerHour: must be 1 to 1000000000 (null = unlimited)"),
        (
            #"{"api": {"rateLimitPerHour": "many"}}"#,
            #"api.rateLimitPerHour: must be an integer, got the string "many""#
        ),
        (#"{"api": {"sandbox": "yes"}}"#, #"api.sandbox: must be true or false"#),
        (#"{"api": {"callbackURL": "https://example.test/hook"}}"#, "api.callbackURL: must be an http:// URL"),
        (#"{"api": {"callbackURL": "http://"}}"#, "api.callbackURL: must be an http:// URL"),
        (#"{"api": {"callbackURL": "http://a b/"}}"#, "api.callbackURL: must be an http:// URL"),
        (
            #"{"api": {"callbackURL": "http://backend.test/hook"}}"#,
            "api.callbackURL: must be an http:// URL with a numeric IPv4 host"
        ),
        (#"{"api": {"callbackURL": "http://192.0.2.23:0/hook"}}"#, "api.callbackURL: must be an http:// URL"),
        (
            #"{"api": {"checkURLErrors": [{"operator": "00101", "error": "mnoNotSupported"}]}}"#,
            "api.checkURLErrors[0].operator: must be MCC-MNC, e.g. 001-01"
        ),
        (
            #"{"api": {"checkURLErrors": [{"operator": "001-01", "error": "mnoNotSupported"}, {"operator": "001-01", "error": "mnoRedirectUnsupported"}]}}"#,
            "api.checkURLErrors[1].operator: 001-01 is listed twice"
        ),
        (
            #"{"api": {"checkURLErrors": [{"operator": "001-01", "error": "notSupported"}]}}"#,
            #"api.checkURLErrors[0].error: must be one of "mnoNotSupported", "mnoRedirectUnsupported""#
        ),
        (#"{"api": {"checkURLErrors": [{"operator": "001-01"}]}}"#, "api.checkURLErrors[0].error: is required"),
        (
            #"{"api": {"checkURLErrors": [{"error": "mnoNotSupported"}]}}"#,
            "api.checkURLErrors[0].operator: is required"
        ),
        (#"{"modems": [{"network": {"checkURLError": "nope"}}]}"#, "modems[0].network.checkURLError: must be one of")
    ])
    func badSettingsNameTheField(json: String, expected: String) throws {
        let error = #expect(throws: CellpathError.self) { try Scenario.decode(Array(json.utf8)) }
        #expect(error?.kind == .dataError)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }
}
