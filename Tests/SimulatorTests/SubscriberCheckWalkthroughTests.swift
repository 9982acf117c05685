import CellpathCore
import FoundationEssentials
import Glibc
import Simulator
import TestSupport
import Testing

/// The docs' curl walk-through in a real world: backend legs over Wi-Fi, the check_url chain
/// through wwan0 and the carrier, with the daemon's fake API, carrier endpoint and data path.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct SubscriberCheckWalkthroughTests {
    /// curl in the device namespace with the world's environment; returns stdout.
    private func curl(_ prefix: String, _ arguments: [String]) throws -> String {
        let result = try Curl.onDevice(of: prefix, arguments)
        #expect(result.status == 0, "curl \(arguments): \(result.stderr)")
        return result.stdout
    }

    private func json(_ text: String) throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))
    }

    @Test func subscriberCheckV02MatchesThroughTheBearerAndFailsThroughWiFi() throws {
        try WorldFixture.withWorld { prefix in
            let status = try SimulatedWorld.status(prefix: prefix)
            #expect(Set(status.services.map(\.name)).isSuperset(of: ["api", "modems", "dns-carrier", "dns-wifi"]))
            #expect(access(status.modems[0].controlPort, F_OK) == 0)
            let env = Dictionary(
                uniqueKeysWithValues: try SimulatedWorld.environment(prefix: prefix).map { ($0.name, $0.value) })
            let id = try #require(env["CELLPATH_CLIENT_ID"]), secret = try #require(env["CELLPATH_CLIENT_SECRET"])

            let token = try json(
                curl(
                    prefix,
                    [
                        "-u", "\(id):\(secret)", "-d", "grant_type=client_credentials&scope=subscriber_check",
                        "https://api.truid.test/oauth2/v1/token"
                    ]))["access_token"]?.string
            let bearer = try #require(token)
            func create() throws -> (id: String, url: String) {
                let check = try json(
                    curl(
                        prefix,
                        [
                            "-H", "Authorization: Bearer \(bearer)", "-H", "Content-Type: application/json",
                            "-d", #"{"phone_number":"+447940448591"}"#,
                            "https://api.truid.test/subscriber_check/v0.2/checks"
                        ]))
                let url = check["_links"]?["check_url"]?["href"]?.string
                return (try #require(check["check_id"]?.string), try #require(url))
            }

            // Through Wi-Fi: the API sees a non-mobile address.
            let overWiFi = try create()
            let refused = try curl(prefix, ["-L", "-o", "/dev/null", "-w", "%{http_code}", overWiFi.url])
            #expect(refused == "412")

            // Through the bearer: the carrier identifies the SIM and the code completes the check.
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let check = try create()
            let result = try json(
                curl(
                    prefix,
                    [
                        "-L", "--interface", "wwan0",
                        "--resolve", "api.truid.test:443:203.0.113.10",
                        "--resolve", "mno.carrier.test:80:100.64.0.1", check.url
                    ]))
            #expect(result["check_id"]?.string == check.id)
            let code = try #require(result["code"]?.string)
            let patched = try json(
                curl(
                    prefix,
                    [
                        "-X", "PATCH", "-H", "Authorization: Bearer \(bearer)",
                        "-H", "Content-Type: application/json-patch+json",
                        "-d", #"[{"op":"add","path":"/code","value":"\#(code)"}]"#,
                        "https://api.truid.test/subscriber_check/v0.2/checks/\(check.id)"
                    ]))
            #expect(patched["status"]?.string == "COMPLETED")
            #expect(patched["match"]?.bool == true)

            // Every request was logged, the carrier hop from the bearer address.
            let log = try SimulatedWorld.requestLog(prefix: prefix)
            #expect(log.contains { $0.contains("\"100.64.23.10\"") && $0.contains(prefix + "carrier") })
            // (Over Wi-Fi's IPv6 when curl prefers it: the Wi-Fi DNS answers AAAA too.)
            #expect(
                log.contains {
                    ($0.contains("\"192.0.2.23\"") || $0.contains("\"2001:db8:2::23\"")) && $0.contains("oauth2")
                })
        }
    }
}
