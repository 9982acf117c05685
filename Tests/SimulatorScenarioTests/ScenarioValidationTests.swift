import CellpathCore
import Glibc
import SimulatorScenario
import Testing

@Suite struct ScenarioValidationTests {
    /// Decodes `json` and returns the error message, or nil when it is accepted.
    private func failure(_ json: String) -> CellpathError? {
        do {
            _ = try Scenario.decode(Array(json.utf8))
            return nil
        } catch let error as CellpathError {
            return error
        } catch {
            Issue.record("unexpected error type: \(error)")
            return nil
        }
    }

    @Test func emptyObjectIsTheBuiltInWorld() throws {
        let scenario = try Scenario.decode(Array("{}".utf8))
        #expect(scenario == Scenario.builtIn)
        #expect(scenario.modems.count == 1)
        #expect(scenario.cellularPath.delayMs == 40)
        #expect(scenario.wifiPath.delayMs == 5)
        #expect(scenario.modems[0].network.operatorID == "001-01")
    }

    @Test func encodedScenarioDecodesToTheSameValue() throws {
        var scenario = Scenario.builtIn
        scenario.modems.append(
            SimulatedModem(
                protocol: .qmi, imei: "351234567890132",
                sim: SimulatedSIM(
                    iccid: "8900101234567890138", imsi: "001010123456780",
                    msisdn: "+447940448592", simChangedMinutesAgo: 30)))
        var withoutSIM = SimulatedModem(index: 2)
        withoutSIM.sim = nil
        scenario.modems.append(withoutSIM)
        scenario.cellularPath = LinkConditions(
            delayMs: 60, jitterMs: 5, lossPercent: 1.5,
            downlink: DirectionOverride(delayMs: 80))
        #expect(
            scenario.cellularPath.direction(uplink: false) == LinkConditions(delayMs: 80, jitterMs: 5, lossPercent: 1.5)
        )
        #expect(
            scenario.cellularPath.direction(uplink: true) == LinkConditions(delayMs: 60, jitterMs: 5, lossPercent: 1.5))
        scenario.api.rateLimitRetryAfter = 3
        scenario.api.faultEvery = 7
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
    }

    @Test(arguments: [
        (#"{"modems": []}"#, "modems: at least one modem"),
        (#"{"modems": [{"imei": "12"}]}"#, "modems[0].imei: must be 15 digits"),
        (#"{"modems": [{}, {"sim": {"msisdn": "447940448591"}}]}"#, "modems[1].sim.msisdn"),
        (
            #"{"modems": [{}, {"sim": {"msisdn": "+447940448591"}}]}"#,
            "modems[1].sim.msisdn: +447940448591 is also the number of modems[0].sim"
        ),
        (#"{"modems": [{"network": {"mnc": "1"}}]}"#, "modems[0].network.mnc"),
        (
            #"{"modems": [{"faults": {"registration": "roaming"}}]}"#,
            #"modems[0].faults.registration: must be one of "registered", "searching", "denied", "deregistered", got the string "roaming""#
        ),
        (
            #"{"modems": [{"protocol": "at"}]}"#,
            #"modems[0].protocol: must be one of "mbim", "qmi", got the string "at""#
        ),
        (#"{"cellularPath": {"lossPercent": 101}}"#, "cellularPath.lossPercent"),
        (#"{"wifiPath": {"delayMs": "5"}}"#, #"wifiPath.delayMs: must be an integer, got the string "5""#),
        (#"{"cellularPath": {"delayMs": 40.5}}"#, "cellularPath.delayMs: must be an integer, got 40.5"),
        (#"{"cellularPath": {"jitterMs": 1e2}}"#, "cellularPath.jitterMs: must be an integer, got 1e2"),
        (#"{"cellularPath": {"delayMs": null}}"#, "cellularPath.delayMs: must be an integer, got null"),
        (#"{"cellularPath": {"lossPercent": true}}"#, "cellularPath.lossPercent: must be a number, got true"),
        (#"{"modems": {"imei": "351234567890124"}}"#, "modems: must be an array, got an object"),
        (#"{"modems": [{"sim": 5}]}"#, "modems[0].sim: must be an object, got 5"),
        (
            #"{"modems": [{"network": {"roaming": "yes"}}]}"#,
            #"modems[0].network.roaming: must be true or false, got the string "yes""#
        ),
        ("[]", "(top level): must be an object, got an array"),
        (#"{"cellularPath": {"uplink": {"lossPercent": 200}}}"#, "cellularPath.uplink.lossPercent"),
        (#"{"cellularPath": {"downlink": {"delay": 5}}}"#, "cellularPath.downlink.delay: unknown field"),
        (#"{"cellularpath": {"delayMs": 5}}"#, #"cellularpath: unknown field (did you mean "cellularPath"?)"#),
        (#"{"modems": [{"imie": "351234567890124"}]}"#, #"modems[0].imie: unknown field (did you mean "imei"?)"#),
        (#"{"zzz": 1}"#, "zzz: unknown field; allowed: modems, cellularPath, wifiPath, api, carrier"),
        (
            #"{"modems": [{"sim": {"msisdn": "+447940448591", "pin_code": "1"}}]}"#,
            "modems[0].sim.pin_code: unknown field"
        ),
        (#"{"api": {"serverErrorStatus": 404}}"#, "api.serverErrorStatus"),
        (#"{"api": {"faultEvery": 1}}"#, "api.faultEvery"),
        (#"{"carrier": {"extraHops": -1}}"#, "carrier.extraHops"),
        ("{", "not valid JSON"),
        ("", "scenario:1:1: not valid JSON: the file is empty")
    ])
    func invalidScenariosNameTheField(json: String, expected: String) throws {
        let error = try #require(failure(json))
        #expect(error.kind == .dataError)
        #expect(error.message.contains(expected), "\(error.message)")
    }

    @Test func loadReadsAFileAndNamesItInErrors() throws {
        var template = Array("/tmp/cellpath-scenario-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        let json = Array(#"{"cellularPath": {"delayMs": 25}, "wifiPath": {"jitterMs": -1}}"#.utf8)
        _ = json.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let error = #expect(throws: CellpathError.self) { try Scenario.load(path: path) }
        #expect(error?.kind == .dataError)
        #expect(error?.message.hasPrefix(path) == true)
        #expect(error?.message.contains("wifiPath.jitterMs") == true)
        #expect(throws: CellpathError.self) { try Scenario.load(path: path + ".missing") }
    }
}

@Suite struct ScenarioIPTypeTests {
    @Test func defaultsAreIPv4WithoutNAT64() throws {
        let scenario = try decode("{}")
        #expect(scenario.modems[0].ipType == .ipv4)
        #expect(scenario.modems[0].nat64 == false)
        #expect(scenario.nat64 == false)
    }

    @Test func readsIPTypeAndNAT64AndKeepsThemThroughEncoding() throws {
        let scenario = try decode(#"{"modems": [{"ipType": "ipv6", "nat64": true}, {"ipType": "ipv4"}]}"#)
        #expect(scenario.modems[0].ipType == .ipv6)
        #expect(scenario.modems[0].nat64)
        #expect(scenario.modems[1].ipType == .ipv4)
        #expect(scenario.nat64)
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
        let dual = try decode(#"{"modems": [{"ipType": "ipv4v6"}]}"#)
        #expect(dual.modems[0].ipType == .ipv4v6)
        #expect(!dual.nat64)
    }

    @Test(arguments: [
        (
            #"{"modems": [{"ipType": "ipv5"}]}"#,
            #"modems[0].ipType: must be one of "ipv4", "ipv6", "ipv4v6", got the string "ipv5""#
        ),
        (#"{"modems": [{"ipType": 6}]}"#, #"modems[0].ipType: must be one of "ipv4", "ipv6", "ipv4v6", got 6"#),
        (#"{"modems": [{"nat64": "yes"}]}"#, #"modems[0].nat64: must be true or false, got the string "yes""#),
        (#"{"modems": [{"nat64": true}]}"#, #"modems[0].nat64: needs "ipType": "ipv6""#),
        (#"{"modems": [{"ipType": "ipv4v6", "nat64": true}]}"#, #"got "ipv4v6""#),
        (
            #"{"modems": [{"ipType": "ipv6", "nat64": true}, {"ipType": "ipv4v6"}]}"#,
            "modems[1].nat64: must be true as for modems[0]"
        ),
        (#"{"modems": [{"iptype": "ipv6"}]}"#, #"did you mean "ipType"?"#)
    ])
    func badIPSettingsNameTheField(json: String, expected: String) {
        let text = validationMessage(json)
        #expect(text?.contains(expected) == true, "\(text ?? "accepted")")
    }

    @Test func anIPv4ModemMayShareANAT64World() throws {
        let scenario = try decode(#"{"modems": [{"ipType": "ipv6", "nat64": true}, {}]}"#)
        #expect(scenario.nat64 && scenario.modems[1].ipType == .ipv4)
    }

    @Test(arguments: [
        (BearerIPType.ipv4, BearerIPType.ipv4, BearerIPType?.some(.ipv4)),
        (.ipv4v6, .ipv6, .ipv6), (.ipv4v6, .ipv4, .ipv4), (.ipv4v6, .ipv4v6, .ipv4v6),
        (.ipv6, .ipv4v6, .ipv6), (.ipv4, .ipv4v6, .ipv4), (.ipv4, .ipv6, nil), (.ipv6, .ipv4, nil)
    ])
    func grantIsTheIntersection(requested: BearerIPType, offered: BearerIPType, granted: BearerIPType?) {
        #expect(requested.granted(by: offered) == granted)
    }
}

/// A second SIM slot's own network: read, written back, and checked as a modem's is.
@Suite struct SecondSlotNetworkTests {
    @Test func theSecondSlotsNetworkRoundTripsAndIsChecked() throws {
        let json = #"""
            {"modems": [{"device": "quectel-em160r-dual-sim", "secondSlot":
              {"esim": false, "sim": {}, "network": {"mcc": "001", "mnc": "03", "operatorName": "second"}}}]}
            """#
        let scenario = try Scenario.decode(Array(json.utf8))
        #expect(scenario.modems[0].secondSlot?.network?.operatorID == "001-03")
        #expect(scenario.modems[0].network.operatorID == "001-01")
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
        #expect(try Scenario.decode(Array(#"{"modems": [{}]}"#.utf8)).modems[0].secondSlot?.network == nil)

        let bad = #"""
            {"modems": [{"device": "quectel-em160r-dual-sim", "secondSlot": {"network": {"mnc": "3"}}}]}
            """#
        #expect(throws: CellpathError.self) { try Scenario.decode(Array(bad.utf8)) }
        do {
            _ = try Scenario.decode(Array(bad.utf8))
        } catch let error as CellpathError {
            #expect(
                error.message.contains("modems[0].secondSlot.network.mnc: must be 2 or 3 digits"), "\(error.message)")
        }
    }
}
