import CellpathCore
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// `cellpath verify --provider twilio|vonage` in the simulated world, against the fake Twilio
/// Verify and Vonage Verify APIs: the verdicts and their exit codes, the device leg on the
/// bearer only (and never over Wi-Fi) under the provider's rules, the backend calls over Wi-Fi,
/// the providers' errors and options (Number Verification's: NumberVerificationEndToEndTests).
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct VerifyEndToEndTests {
    static let ownNumber = "+447940448591"
    static let bearerAddress = "100.64.23.10"

    static var scenario: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems[0].sim?.msisdn = ownNumber
        return scenario
    }

    /// Every hop of a run's chain left from the bearer's address.
    static func chainStayedOnTheBearer(_ json: JSONValue) -> Bool {
        let hops = json["check_url"]?["hops"]?.array ?? []
        return !hops.isEmpty && hops.allSatisfy { $0["local_address"]?.string == bearerAddress }
    }

    @Test func twilioVerifiesTheSIMsNumberAndNotAnother() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let mark = try device.requestLog().count
            let verified = try device.cellpath(["verify", Self.ownNumber, "--provider", "twilio", "--json"])
            #expect(verified.status == 0, "\(verified.stderr)")
            let json = try JSONValue.parse(verified.stdout)
            #expect(json["outcome"]?.string == "verified")
            #expect(json["device_leg"]?.string == "twilio-sna")
            #expect(json["backend"]?.string == "Twilio Verify https://verify.twilio.test")
            #expect(json["phone_number"]?.string == "+••••91")
            #expect(Self.chainStayedOnTheBearer(json), "\(verified.stdout)")
            let log = Array(try device.requestLog().dropFirst(mark))
            let sna = log.filter { $0["path"]?.string?.hasPrefix("/v2/sna/") == true }
            #expect(sna.count == 1 && sna[0]["source"]?.string == Self.bearerAddress, "\(log)")
            // Create and VerificationCheck over Wi-Fi, never through the bearer.
            let backend = log.filter { $0["path"]?.string?.hasPrefix("/v2/Services/") == true }
            #expect(backend.count == 2, "\(log)")
            #expect(backend.allSatisfy { $0["source"]?.string != Self.bearerAddress }, "\(log)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")

            let other = try device.cellpath(["verify", "+447940448592", "--provider", "twilio", "--json"])
            #expect(other.status == 1, "\(other.stderr)")
            let otherJSON = try JSONValue.parse(other.stdout)
            #expect(otherJSON["outcome"]?.string == "not_verified")
            #expect(otherJSON["error_codes"]?.string == "60500")
        }
    }

    @Test func vonageVerifiesWithItsSDKsHeaderAndRejectsAnotherNumber() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let mark = try device.requestLog().count
            let verified = try device.cellpath([
                "verify", Self.ownNumber, "--provider", "vonage", "--fallback", "sms", "--json", "--verbose-full"
            ])
            #expect(verified.status == 0, "\(verified.stderr)")
            let json = try JSONValue.parse(verified.stdout)
            #expect(json["outcome"]?.string == "verified")
            #expect(json["device_leg"]?.string == "vonage-silent-auth")
            #expect(Self.chainStayedOnTheBearer(json), "\(verified.stdout)")
            let hops = json["check_url"]?["hops"]?.array ?? []
            #expect(hops.allSatisfy { $0["url"]?.string?.hasPrefix("https://api.vonage.test/") == true })
            let sent = hops.first?["request_headers"]?.array ?? []
            #expect(
                sent.contains { $0["name"]?.string == "x-silentauth-sdk-request" },
                "\(hops.first.map { "\($0)" } ?? "")")
            let log = Array(try device.requestLog().dropFirst(mark))
            let deviceLeg = log.filter { $0["path"]?.string?.contains("/silent-auth/") == true }
            #expect(
                deviceLeg.count == 2 && deviceLeg.allSatisfy { $0["source"]?.string == Self.bearerAddress }, "\(log)")

            let other = try device.cellpath(["verify", "+447940448592", "--provider", "vonage", "--json"])
            #expect(other.status == 1, "\(other.stderr)")
            #expect(try JSONValue.parse(other.stdout)["status"]?.string == "user_rejected")

            // With a redirect_url the chain stops there, unrequested, and the code is read from its fragment.
            let redirected = try device.cellpath([
                "verify", Self.ownNumber, "--provider", "vonage", "--redirect-url", "https://app.example/done", "--json"
            ])
            #expect(redirected.status == 0, "\(redirected.stderr)")
            let chain = try JSONValue.parse(redirected.stdout)["check_url"]
            #expect(chain?["result"]?["stopped_at"]?.string?.hasPrefix("https://app.example/done#request_id=") == true)
            #expect(
                chain?["hops"]?.array?.allSatisfy { $0["url"]?.string?.hasPrefix("https://app.example") == false }
                    == true)
        }
    }

    /// Field mode with a provider: Twilio keeps a number's unmatched verifications pending, and
    /// its sixth pending one is refused with 429 (60203): five runs not verified, then the
    /// provider's error after the retries; the field run exits with the failure's code (75).
    @Test func twilioRateLimitEndsAFieldRunWithItsError() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let result = try device.cellpath([
                "verify", "+447940448592", "--provider", "twilio", "--repeat", "6", "--interval", "0", "--json"
            ])
            #expect(result.status == 75, "\(result.stdout)\(result.stderr)")
            let lines = try result.stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }
            #expect(lines.count == 7, "six runs and the summary: \(result.stdout)")
            #expect(lines.prefix(5).allSatisfy { $0["outcome"]?.string == "not_verified" })
            #expect(lines[5]["error"]?.string?.contains("429") == true, "\(lines[5])")
            #expect(lines[5]["error"]?.string?.contains("60203") == true, "\(lines[5])")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
        }
    }

    /// `verify --provider truid` is a SubscriberCheck run with the keys docs/json.md adds for
    /// `verify`, and the tru.ID SDK's rules (`x-tru-ops` sent).
    @Test func truIDIsASubscriberCheckWithTheDocumentedKeys() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let result = try device.cellpath(["verify", Self.ownNumber, "--direct", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let json = try JSONValue.parse(result.stdout)
            #expect(json["product"]?.string == "subscriber_check" && json["device_leg"]?.string == "truid")
            #expect(json["operator_sent"]?.string == "001-01")
            // `position` is there with --location or --position only (LocationEndToEndTests).
            #expect(
                Set(json.objectKeys)
                    == (try CheckCommandsEndToEndTests.documentedKeys("`cellpath subscriber-check`")).union(
                        try CheckCommandsEndToEndTests.documentedKeys("`cellpath verify`")
                    ).subtracting(["position"]))
        }
    }

    /// A check on a bearer that is already up starts its chain at once from cellpath's record,
    /// and still names in `x-tru-ops` the network the modem serves on at check time: here the
    /// modem moved onto another operator's cell between `bearer up` and the check.
    @Test func truIDSendsTheNetworkOfCheckTimeOnARecordedBearer() throws {
        var scenario = Self.scenario
        var otherOperator = SimulatedCell(cellId: 0x777)
        (otherOperator.mcc, otherOperator.mnc, otherOperator.operatorName) = ("001", "02", "cellpath sim 2")
        scenario.modems[0].network.cells = [SimulatedCell(), otherOperator]
        try SimulatedDevice.with(scenario, connect: false) { device in
            let up = try device.cellpath(["bearer", "up", "-m", "0", "-q"])
            #expect(up.status == 0, "\(up.stderr)")
            defer { _ = try? device.cellpath(["bearer", "down", "-m", "0", "-q"]) }
            _ = try SimulatedWorld.lifecycle(.handover(cell: 1), prefix: device.prefix)
            let mark = try device.requestLog().count
            let result = try device.cellpath(["verify", Self.ownNumber, "-m", "0", "--direct", "--json", "-v"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("the check starts on it now"), "\(result.stderr)")
            #expect(try JSONValue.parse(result.stdout)["operator_sent"]?.string == "001-02")
            let log = Array(try device.requestLog().dropFirst(mark))
            let sent = log.filter { $0["x_tru_ops"] != nil }
            #expect(sent.count == 1, "\(log)")
            #expect(sent.first?["x_tru_ops"]?.string == "00102", "\(log)")
            #expect(sent.first?["path"]?.string?.hasSuffix("/redirect") == true, "\(log)")
        }
    }

    @Test func anotherProvidersOptionIsAUsageError() throws {
        let result = try CellpathBinary.run(["verify", "+447940448591", "--provider", "twilio", "--fallback", "sms"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("'--fallback' applies to --provider vonage only"), "\(result.stderr)")
    }
}
