import CellpathCore
import SimulatorScenario
import Testing

/// The scenario's lifecycle knobs: `faults.slowAfterReset…`, the `events` list, and a router-mode
/// modem written back without a protocol.
@Suite struct LifecycleScenarioTests {
    @Test func eventsAndSlowAfterResetAreReadAndSurviveTheDaemonsCopy() throws {
        let scenario = try decode(
            """
            {"modems": [{"faults": {"slowAfterResetMs": 800, "slowAfterResetSeconds": 20}}, {"protocol": "qmi"}],
             "events": [{"atSeconds": 30, "event": "reset", "modem": 1, "renumber": true, "slowMs": 100},
                        {"atSeconds": 60, "event": "swapSIM",
                         "sim": {"iccid": "8900101234567890997", "imsi": "001010999999999", "msisdn": "+447700900999"}},
                        {"atSeconds": 5, "event": "reportDNS", "dnsServers": ["0.0.0.0", "::"]},
                        {"atSeconds": 90, "event": "suspend"}, {"atSeconds": 95, "event": "resume"}]}
            """)
        #expect(scenario.modems[0].faults.slowAfterResetMs == 800)
        #expect(scenario.modems[0].faults.slowAfterResetSeconds == 20)
        #expect(scenario.modems[1].faults.slowAfterResetSeconds == 10)
        #expect(scenario.events.map(\.event) == [.reset, .swapSIM, .reportDNS, .suspend, .resume])
        #expect(scenario.events[0].modem == 1 && scenario.events[0].renumber && scenario.events[0].slowMs == 100)
        #expect(scenario.events[1].sim?.msisdn == "+447700900999")
        #expect(scenario.events[2].dnsServers == ["0.0.0.0", "::"])
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
    }

    @Test func aRouterModemSurvivesTheDaemonsCopy() throws {
        let scenario = try decode(#"{"modems": [{}, {"device": "huawei-e3372h-hilink"}]}"#)
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
    }

    @Test func badEventsAreRefusedByField() {
        #expect(
            validationMessage(#"{"events": [{"event": "reset"}]}"#)?.hasSuffix("events[0].atSeconds: is required")
                == true)
        #expect(
            validationMessage(#"{"events": [{"atSeconds": 1, "event": "reboot"}]}"#)?
                .contains("events[0].event: must be one of") == true)
        #expect(
            validationMessage(#"{"events": [{"atSeconds": 1, "event": "reset", "modem": 2}]}"#)?
                .hasSuffix("events[0].modem: must be a modem of this world, 0 to 0") == true)
        #expect(
            validationMessage(#"{"events": [{"atSeconds": 1, "event": "swapSIM"}]}"#)?
                .hasSuffix("events[0].sim: swapSIM needs the SIM inserted") == true)
        #expect(
            validationMessage(#"{"events": [{"atSeconds": 1, "event": "reportDNS", "dnsServers": ["dns.test"]}]}"#)?
                .hasSuffix("events[0].dnsServers[0]: must be a numeric IPv4 or IPv6 address") == true)
        #expect(
            validationMessage(#"{"events": [{"atSeconds": 1, "event": "resume"}]}"#)?
                .hasSuffix("events[0].event: the machine is not suspended then") == true)
        #expect(
            validationMessage(
                #"{"events": [{"atSeconds": 1, "event": "suspend"}, {"atSeconds": 2, "event": "suspend"}]}"#)?
                .hasSuffix("events[1].event: the machine is already suspended then") == true)
        #expect(
            validationMessage(#"{"modems": [{"faults": {"slowAfterResetSeconds": 0}}]}"#)?
                .hasSuffix("modems[0].faults.slowAfterResetSeconds: must be 1 to 3600") == true)
        let routerReset =
            #"{"modems": [{"device": "huawei-e3372h-hilink"}], "#
            + #""events": [{"atSeconds": 1, "event": "reset"}]}"#
        #expect(
            validationMessage(routerReset)?
                .hasSuffix("events[0].modem: modem 0 has no MBIM or QMI port to take events through") == true)
        #expect(validationMessage(#"{"events": [{"atSeconds": 1, "event": "reset", "when": 3}]}"#) != nil)
    }
}
