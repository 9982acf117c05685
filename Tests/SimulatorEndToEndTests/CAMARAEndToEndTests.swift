import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// CAMARA in a simulated world: Number Verification (`cellpath-camara-probe`, the library entry
/// point) with its device leg over the real bearer or over Wi-Fi, against the world's fake
/// operator; `cellpath sim-swap` against the same operator with the world's `[camara]` client.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct CAMARAEndToEndTests {
    static let probe: String = {
        var dir = CellpathBinary.path.split(separator: "/", omittingEmptySubsequences: false)
        dir.removeLast()
        return dir.joined(separator: "/") + "/cellpath-camara-probe"
    }()
    static let number = SimulatedSIM.defaultMSISDN(index: 0)

    /// The probe on the device: `arguments` after the path options of `interface`.
    func probe(_ device: SimulatedDevice, _ arguments: [String], wifi: Bool = false) throws -> JSONValue {
        let path =
            wifi ? ["--interface", "wlan0", "--dns", "192.0.2.1"] : ["--interface", "wwan0", "--dns", "100.64.0.53"]
        let result = try device.run(
            [Self.probe] + arguments + path + ["--redirect-uri", WorldTopology.camaraRedirectURI])
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONValue.parse(result.stdout)
    }

    /// The world's request log lines to the client's redirect URI (the operator shares the API's
    /// address by host name; no other fake serves this path).
    func requestsToRedirectURI(_ device: SimulatedDevice) throws -> [JSONValue] {
        try device.requestLog().filter { $0["path"]?.string?.hasPrefix("/client/callback") == true }
    }

    @Test func numberVerificationOverTheBearer() throws {
        var scenario = Scenario(modems: [SimulatedModem(index: 0)])
        scenario.modems[0].sim = SimulatedSIM(simChangedMinutesAgo: 90)
        try SimulatedDevice.with(scenario) { device in
            let verified = try probe(device, ["verify", Self.number])
            #expect(verified["verified"]?.bool == true, "\(verified)")
            #expect(verified["interface"]?.string == "wwan0")
            #expect(try probe(device, ["verify", Self.number, "--hashed"])["verified"]?.bool == true)
            #expect(try probe(device, ["verify", "+447940448599"])["verified"]?.bool == false)
            #expect(try probe(device, ["share"])["device_number"]?.string == Self.number)

            // Over Wi-Fi the operator cannot tell who the device is.
            let wifi = try probe(device, ["verify", Self.number], wifi: true)
            #expect(wifi["code"]?.string == "access_denied", "\(wifi)")
            #expect(wifi["error"]?.string == FailureKind.unavailable.rawValue)

            let tampered = try probe(device, ["verify", Self.number, "--tamper-state"])
            #expect(tampered["code"]?.string == "state_mismatch", "\(tampered)")

            let log = try device.requestLog()
            let authorizations = log.filter { $0["path"]?.string?.hasPrefix("/oauth2/authorize") == true }
            // Five device legs through the bearer (verify twice, another number, share, the
            // tampered state) and one through Wi-Fi.
            #expect(authorizations.count == 6)
            #expect(authorizations.filter { $0["source"]?.string?.hasPrefix("100.64.") == true }.count == 5)
            #expect(try requestsToRedirectURI(device).isEmpty)
            // The sim log masks what the authorize URL carries.
            #expect(!log.contains { $0["path"]?.string?.contains("4479404485") == true })
            #expect(authorizations.allSatisfy { $0["path"]?.string?.contains("state=[redacted]") == true })

            // SIM Swap through the command, with the world's [camara] client (over Wi-Fi).
            let recent = try device.cellpath(["sim-swap", Self.number, "--max-age", "2", "--json"])
            #expect(recent.status == 2, "\(recent.stderr)")
            let record = try JSONValue.parse(recent.stdout)
            #expect(record["swapped"]?.bool == true && record["max_age_hours"]?.int == 2)
            #expect(record["latest_sim_change"]?.string?.hasSuffix("Z") == true)
            #expect(record["phone_number"]?.string != Self.number)
            let older = try device.cellpath(["sim-swap", Self.number, "--max-age", "1", "--provider", "camara"])
            #expect(older.status == 0, "\(older.stderr)")
            #expect(older.stdout.contains("did not change within 1 hours"))
            let unknown = try device.cellpath(["sim-swap", "+447940448599"])
            #expect(unknown.status == 65, "\(unknown.stderr)")
            #expect(unknown.stderr.contains("IDENTIFIER_NOT_FOUND"))
        }
    }

    /// `sim-swap --provider vonage`: Vonage's SIM Swap with a CIBA token per operation (the
    /// backchannel request, then the ciba grant), over Wi-Fi; a number the operator does not
    /// serve is its `unknown_user_id` (65).
    @Test func vonageSIMSwapWithCIBA() throws {
        var scenario = Scenario(modems: [SimulatedModem(index: 0)])
        scenario.modems[0].sim = SimulatedSIM(simChangedMinutesAgo: 90)
        try SimulatedDevice.with(scenario, connect: false) { device in
            let mark = try device.requestLog().count
            let recent = try device.cellpath([
                "sim-swap", Self.number, "--provider", "vonage", "--max-age", "2", "--json"
            ])
            #expect(recent.status == 2, "\(recent.stderr)")
            let record = try JSONValue.parse(recent.stdout)
            #expect(record["provider"]?.string == "vonage" && record["swapped"]?.bool == true)
            #expect(record["latest_sim_change"]?.string?.hasSuffix("Z") == true)
            let log = Array(try device.requestLog().dropFirst(mark))
            func paths(_ prefix: String) -> [JSONValue] { log.filter { $0["path"]?.string?.hasPrefix(prefix) == true } }
            #expect(paths("/oauth2/bc-authorize").count == 2 && paths("/oauth2/token").count == 2, "\(log)")
            #expect(paths("/camara/sim-swap/v040/").count == 2, "\(log)")
            #expect(log.allSatisfy { $0["source"]?.string?.hasPrefix("100.64.") == false }, "\(log)")

            let older = try device.cellpath(["sim-swap", Self.number, "--provider", "vonage", "--max-age", "1"])
            #expect(older.status == 0, "\(older.stderr)")
            #expect(older.stdout.contains("did not change within 1 hours"))
            let unknown = try device.cellpath(["sim-swap", "+447940448599", "--provider", "vonage"])
            #expect(unknown.status == 65, "\(unknown.stderr)")
            #expect(unknown.stderr.contains("unknown_user_id"), "\(unknown.stderr)")

            // An application the operator does not know: 401 invalid_client, whose hint names
            // Vonage's settings, not the [camara] profile's.
            let refused = try CellpathBinary.run([
                "sim", "exec", "--prefix", device.prefix, "--", "env", "CELLPATH_VONAGE_APPLICATION_ID=unknown-app",
                CellpathBinary.path, "sim-swap", Self.number, "--provider", "vonage", "--json"
            ])
            #expect(refused.status == 78, "\(refused.stdout)\(refused.stderr)")
            let hint = try JSONValue.parse(refused.stdout)["error"]?["hint"]?.string ?? ""
            #expect(hint.contains("vonage.application_id") && !hint.contains("camara"), "\(refused.stdout)")
        }
    }
}
