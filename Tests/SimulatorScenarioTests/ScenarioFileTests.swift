import CellpathCore
import FoundationEssentials
import Glibc
import SimulatorScenario
import Testing

/// Scenario files as a user writes them: strict JSON with line and column in errors,
/// `"sim": null`, distinct default identities per modem, and a scenario that survives the copy
/// the daemon reads.
@Suite struct ScenarioFileTests {
    private func message(_ json: String, source: String = "my.json") throws -> String {
        let error = #expect(throws: CellpathError.self) { try Scenario.decode(Array(json.utf8), source: source) }
        #expect(error?.kind == .dataError)
        return try #require(error?.message)
    }

    @Test(arguments: [
        (
            "{\n  \"modems\": [\n    {\"imei\": \"351234567890124\",}\n  ]\n}",
            "my.json:3:32: not valid JSON: trailing comma before '}'"
        ),
        ("{\"modems\": [{}, ]}", "my.json:1:17: not valid JSON: trailing comma before ']'"),
        (
            "{\n\"wifiPath\": {\"delayMs\": 5,\n  \"delayMs\": 6}}",
            "my.json:3:3: not valid JSON: duplicate key \"delayMs\" (first at line 2, column 14)"
        ),
        ("{\"modems\": [{\"model\": \"a\tb\"}]}", "my.json:1:25: not valid JSON: a tab inside a string"),
        ("{\"modems\": [{\"model\": \"a\nb\"}]}", "my.json:1:25: not valid JSON: a line break inside a string"),
        (
            "{\"modems\": [{\"model\": \"a\u{1}b\"}]}",
            "my.json:1:25: not valid JSON: control character U+0001 inside a string"
        ),
        ("{\"modems\": [{\"model\": \"a\\qb\"}]}", "my.json:1:25: not valid JSON: invalid escape \\q"),
        (
            "{\"modems\": [{\"model\": \"\\ud800\"}]}",
            "my.json:1:24: not valid JSON: a high surrogate \\uD800 not followed by a low one"
        ),
        (
            "{\n  // the default world\n}",
            "my.json:2:3: not valid JSON: unexpected '/' (comments are not allowed in JSON)"
        ),
        ("{'modems': []}", "my.json:1:2: not valid JSON: unexpected \"'\" (JSON strings use double quotes)"),
        ("{\"api\": {\"slowMs\": 01}}", "my.json:1:21: not valid JSON: a number must not start with 0"),
        ("{} {}", "my.json:1:4: not valid JSON: unexpected '{' after the end of the document"),
        ("{\"modems\": [", "my.json:1:13: not valid JSON: unexpected end of file: expected a value"),
        ("{\"é\": 1, \"x\" 1}", "my.json:1:14: not valid JSON: unexpected '1': expected ':' after the key")
    ])
    func syntaxErrorsGiveLineAndColumn(json: String, expected: String) throws {
        let text = try message(json)
        #expect(text.hasPrefix(expected), "\(text)")
    }

    @Test func invalidUTF8IsRefused() throws {
        let error = #expect(throws: CellpathError.self) {
            try Scenario.decode(
                Array("{\"modems\": [{\"model\": \"a".utf8) + [0xC3, 0x28] + Array("\"}]}".utf8), source: "my.json")
        }
        #expect(
            error?.message.hasPrefix("my.json:1:25: not valid JSON: invalid UTF-8") == true,
            "\(String(describing: error))")
    }

    /// Ill-formed UTF-8 (overlong, surrogate, beyond U+10FFFF, truncated, stray continuation)
    /// is refused at the same place with and without an escape in the string, and well-formed
    /// multi-byte text reads back the same both ways.
    @Test(
        arguments: [
            [0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF8, 0x88, 0x80, 0x80, 0x80],
            [0xE2, 0x82], [0x80]
        ] as [[UInt8]])
    func illFormedUTF8IsRefusedWithOrWithoutEscapes(_ sequence: [UInt8]) throws {
        for escape in [[], Array("\\n".utf8)] {
            let json = Array("{\"modems\": [{\"model\": \"a".utf8) + sequence + escape + Array("\"}]}".utf8)
            let error = #expect(throws: CellpathError.self) { try Scenario.decode(json, source: "my.json") }
            #expect(
                error?.message.hasPrefix("my.json:1:25: not valid JSON: invalid UTF-8") == true,
                "\(sequence) \(String(describing: error))")
        }
    }

    @Test func wellFormedTextReadsTheSameWithOrWithoutEscapes() throws {
        let text = "é€𝄞 \u{7F}ok"
        for (escape, suffix) in [("", ""), ("\\t", "\t")] {
            let scenario = try Scenario.decode(
                Array("{\"modems\": [{\"model\": \"\(text)\(escape)\"}]}".utf8), source: "my.json")
            #expect(scenario.modems.first?.model == text + suffix)
        }
    }

    @Test func deepNestingIsRefusedWithoutCrashing() throws {
        let text = try message("{\"api\": " + String(repeating: "[", count: 100_000))
        #expect(text.contains("nested deeper than"), "\(text)")
    }

    @Test func fieldErrorsPointAtTheValue() throws {
        let json = """
            {
              "cellularPath": {
                "delayMs": 40.5
              }
            }
            """
        #expect(try message(json) == "my.json:3:16: cellularPath.delayMs: must be an integer, got 40.5")
        let choice = "{\"modems\": [\n  {},\n  {\"protocol\": \"lte\"}]}"
        #expect(
            try message(choice)
                == #"my.json:3:16: modems[1].protocol: must be one of "mbim", "qmi", got the string "lte""#)
        let range = """
            {
              "modems": [
                {"imei": "12"}
              ]
            }
            """
        #expect(try message(range) == "my.json:3:14: modems[0].imei: must be 15 digits")
        let unknown = "{\n  \"modems\": [{\"sim\": {\n      \"pinCode\": \"1234\"}}]}"
        #expect(
            try message(unknown)
                == "my.json:3:7: modems[0].sim.pinCode: unknown field; allowed: iccid, imsi, msisdn, pinLocked, pin, pinAttemptsLeft, simChangedMinutesAgo"
        )
        // A default SIM's number that clashes points at its modem.
        let clash = "{\"modems\": [{\"sim\": {\"msisdn\": \"+447940448592\"}},\n {}]}"
        #expect(
            try message(clash)
                == "my.json:2:2: modems[1].sim.msisdn: +447940448592 is also the number of modems[0].sim (each SIM needs its own)"
        )
    }

    @Test func stringsAreDecodedExactly() throws {
        let json = #"{"modems": [{"model": "Modem \u00e9\ud83d\udcf6 \"x\"\\\/", "manufacturer": "Ünïcode"}]}"#
        let scenario = try Scenario.decode(Array(json.utf8))
        #expect(scenario.modems[0].model == "Modem é📶 \"x\"\\/")
        #expect(scenario.modems[0].manufacturer == "Ünïcode")
    }

    @Test func nullSIMMeansNoSIMAndSurvivesTheDaemonsCopy() throws {
        let scenario = try Scenario.decode(
            Array(#"{"modems": [{"sim": null}, {"sim": {"msisdn": "+447940448591"}}]}"#.utf8))
        #expect(scenario.modems[0].sim == nil)
        #expect(scenario.modems[1].sim?.msisdn == "+447940448591")
        // The daemon reads the scenario back from its run directory: it must be the same world.
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
    }

    /// `modemManager` (`sim up --modemmanager`): off unless given, read as given, kept in the
    /// daemon's copy, and anything but a boolean refused at the field.
    @Test func modemManagerIsReadAndSurvivesTheDaemonsCopy() throws {
        #expect(try Scenario.decode(Array("{}".utf8)).modemManager == false)
        let scenario = try Scenario.decode(Array(#"{"modemManager": true, "modems": [{}, {"protocol": "qmi"}]}"#.utf8))
        #expect(scenario.modemManager)
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
        #expect(try Scenario.decode(Array(#"{"modemManager": false}"#.utf8)).modemManager == false)
        let refused = try message(#"{"modemManager": "yes"}"#)
        #expect(refused.contains("modemManager"), "\(refused)")
    }

    /// The providers' faults (Twilio's, Vonage's, CIBA's): read as given, kept in the daemon's
    /// copy; a code Twilio does not document, or another silent_auth status, refused at the field.
    @Test func providerFaultsAreReadAndSurviveTheDaemonsCopy() throws {
        let scenario = try Scenario.decode(
            Array(
                #"""
                {"providers": {"twilio": {"snaErrorCode": -30, "expired": true},
                               "vonage": {"silentAuthStatus": "expired", "concurrent": true},
                               "vonageNV": {"backchannelError": "slow_down"}}}
                """#.utf8))
        #expect(scenario.providers.twilio.snaErrorCode == -30 && scenario.providers.twilio.expired)
        #expect(scenario.providers.vonage.silentAuthStatus == .expired && scenario.providers.vonage.concurrent)
        #expect(scenario.providers.vonageNV.backchannelError == .slowDown)
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
        let code = try message(#"{"providers": {"twilio": {"snaErrorCode": -7}}}"#)
        #expect(code.contains("providers.twilio.snaErrorCode") && code.contains("-30"), "\(code)")
        let status = try message(#"{"providers": {"vonage": {"silentAuthStatus": "completed"}}}"#)
        #expect(status.contains("providers.vonage.silentAuthStatus"), "\(status)")
    }

    @Test func absentSIMIsTheDefaultSIM() throws {
        let scenario = try Scenario.decode(Array(#"{"modems": [{"protocol": "qmi"}]}"#.utf8))
        #expect(scenario.modems[0].sim == SimulatedSIM(index: 0))
    }

    @Test func modemsGetDistinctValidDefaultIdentities() throws {
        let scenario = try Scenario.decode(
            Array(#"{"modems": [{}, {"protocol": "qmi"}, {"sim": {"pinLocked": true}}, {}]}"#.utf8))
        let modems = scenario.modems
        #expect(Set(modems.map(\.imei)).count == 4)
        #expect(Set(modems.compactMap(\.sim?.iccid)).count == 4)
        #expect(Set(modems.compactMap(\.sim?.imsi)).count == 4)
        #expect(Set(modems.compactMap(\.sim?.msisdn)).count == 4)
        #expect(modems[2].sim?.pinLocked == true)
        #expect(modems[2].sim?.iccid == SimulatedSIM.defaultICCID(index: 2))
        for modem in modems {
            #expect(modem.imei.count == 15 && luhnValid(modem.imei), "\(modem.imei)")
            let sim = try #require(modem.sim)
            #expect(sim.iccid.count == 19 && luhnValid(sim.iccid), "\(sim.iccid)")
            #expect(sim.imsi.hasPrefix("00101") && sim.imsi.count == 15, "\(sim.imsi)")
        }
        // Every identity stays valid up to the largest world.
        let largest = (0 ..< Scenario.maximumModems).map { SimulatedModem(index: $0) }
        #expect(Set(largest.map(\.imei)).count == Scenario.maximumModems)
        #expect(largest.allSatisfy { luhnValid($0.imei) && luhnValid($0.sim!.iccid) })
        try Scenario(modems: largest).validate()
    }

    @Test func pathDefaultsStayWhenAPathObjectIsGiven() throws {
        let scenario = try Scenario.decode(
            Array(#"{"cellularPath": {"jitterMs": 5}, "wifiPath": {"lossPercent": 1}}"#.utf8))
        #expect(scenario.cellularPath == LinkConditions(delayMs: 40, jitterMs: 5))
        #expect(scenario.wifiPath == LinkConditions(delayMs: 5, lossPercent: 1))
    }

    /// Luhn check, written out here independently of the module's.
    private func luhnValid(_ number: String) -> Bool {
        let digits = number.compactMap(\.wholeNumberValue)
        guard digits.count == number.count else { return false }
        var sum = 0
        for (i, d) in digits.reversed().enumerated() { sum += i % 2 == 1 ? (d * 2 > 9 ? d * 2 - 9 : d * 2) : d }
        return sum % 10 == 0
    }
}

/// docs/simulator.md's example scenario is valid and means what the page says.
@Suite struct ScenarioDocumentationTests {
    @Test func theDocumentedExampleIsValid() throws {
        let root = String(#filePath.split(separator: "/Tests/").first!)
        let page = try #require(read("\(root)/docs/simulator.md"))
        let section = try #require(page.components(separatedBy: "## Scenario file").dropFirst().first)
        let example = try #require(
            section.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let scenario = try Scenario.decode(Array(example.utf8), source: "docs/simulator.md")
        #expect(scenario.modems.count == 3)
        #expect(scenario.modems[0].imei == SimulatedModem.defaultIMEI(index: 0))
        #expect(scenario.modems[0].sim == SimulatedSIM(index: 0))
        #expect(scenario.modems[1].imei == "351234567890132")
        #expect(scenario.modems[1].sim?.iccid == "8900101234567890138")
        #expect(scenario.modems[1].sim?.imsi == "001010123456790")
        #expect(scenario.modems[2].sim == nil)
        #expect(scenario.modems[1].ipType == .ipv4v6 && scenario.modems[0].ipType == .ipv4)
    }

    private func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes += buffer[0 ..< n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
