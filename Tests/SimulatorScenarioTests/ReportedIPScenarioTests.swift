import CellpathCore
import SimulatorScenario
import Testing

/// The scenario knobs of hostile IP configurations (`modems[i].reportedIP`) and of the API's
/// retained checks (`api.retainedChecks`).
@Suite struct ReportedIPScenarioTests {
    @Test func reportedIPIsReadAndSurvivesTheDaemonsRoundTrip() throws {
        let scenario = try Scenario.decode(
            Array(
                """
                {"modems": [{"protocol": "qmi", "ipType": "ipv4v6",
                             "reportedIP": {"ipv4Address": "0.0.0.0", "ipv6Address": "fe80::2",
                                            "dnsServers": ["127.0.0.53", "::"], "mtu": 65535}}],
                 "api": {"retainedChecks": 50}}
                """.utf8))
        #expect(
            scenario.modems[0].reportedIP
                == ReportedIPConfiguration(
                    ipv4Address: "0.0.0.0", ipv6Address: "fe80::2",
                    dnsServers: ["127.0.0.53", "::"], mtu: 65535))
        #expect(scenario.api.retainedChecks == 50)
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
        #expect(try Scenario.decode(Array("{}".utf8)).modems[0].reportedIP == nil)
        #expect(try Scenario.decode(Array("{}".utf8)).api.retainedChecks == 10_000)
    }

    @Test func badReportedValuesAndRetentionAreRefusedByField() {
        #expect(
            validationMessage(#"{"modems": [{"reportedIP": {"ipv4Address": "fe80::1"}}]}"#)
                == "scenario:1:44: modems[0].reportedIP.ipv4Address: must be a numeric IPv4 address")
        #expect(
            validationMessage(#"{"modems": [{"reportedIP": {"ipv6Address": "10.0.0.1"}}]}"#)
                == "scenario:1:44: modems[0].reportedIP.ipv6Address: must be a numeric IPv6 address")
        #expect(
            validationMessage(#"{"modems": [{"reportedIP": {"dnsServers": ["1.1.1.1", "dns.example"]}}]}"#)?
                .hasSuffix("modems[0].reportedIP.dnsServers[1]: must be a numeric IPv4 or IPv6 address") == true)
        #expect(
            validationMessage(#"{"modems": [{"reportedIP": {"dnsServers": ["1.1.1.1", "1.0.0.1", "9.9.9.9"]}}]}"#)?
                .hasSuffix("modems[0].reportedIP.dnsServers: at most 2 servers of each family (what QMI carries)")
                == true)
        #expect(
            validationMessage(#"{"modems": [{"reportedIP": {"mtu": -1}}]}"#)?.hasSuffix(
                "modems[0].reportedIP.mtu: must be 0 to 4294967295") == true)
        #expect(validationMessage(#"{"modems": [{"reportedIP": {"gateway": "1.2.3.4"}}]}"#) != nil)  // an unknown key
        #expect(
            validationMessage(#"{"api": {"retainedChecks": 9}}"#)?.hasSuffix(
                "api.retainedChecks: must be 10 to 1000000") == true)
    }
}
