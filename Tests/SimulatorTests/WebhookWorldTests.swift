import CShims
import CellpathCore
import FoundationEssentials
import Glibc
import HTTPServer
import Simulator
import SimulatorScenario
import Synchronization
import TestSupport
import Testing

/// The daemon's webhooks: the key made into the run directory and published, a check's end
/// status POSTed from the internet namespace to a receiver on the device's Wi-Fi address.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct WebhookWorldTests {
    /// curl in the device namespace with the world's environment; returns stdout.
    private func curl(_ prefix: String, _ arguments: [String]) throws -> String {
        let result = try Curl.onDevice(of: prefix, arguments)
        #expect(result.status == 0, "curl \(arguments): \(result.stderr)")
        return result.stdout
    }

    @Test func aCompletedCheckIsPostedToTheCallbackURLSignedWithThePublishedKey() throws {
        var scenario = Scenario.builtIn
        scenario.api.callbackURL = "http://192.0.2.23:8099/hook?project=sim"
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            let received = Mutex<[HTTPRequest]>([])
            let fd = cshims_netns_listen_socket("/run/netns/\(prefix)ue", "192.0.2.23", 8099)
            try #require(fd >= 0)
            let receiver = try HTTPServer(listener: .socket(fd)) { request in
                received.withLock { $0.append(request) }
                return HTTPResponse(status: 200, contentType: "text/plain", body: "ok")
            }
            defer { receiver.stop() }

            // The published key is the run directory's key.
            let run = RunDirectory(prefix: prefix)
            var info = stat()
            #expect(stat(run.webhookKey, &info) == 0 && info.st_mode & 0o777 == 0o600)
            let keys = try JSONValue.parse(curl(prefix, ["https://api.truid.test/.well-known/jwks.json"]))
            let jwk = try #require(keys["keys"]?.array?.first)
            let modulus = try WorldFixture.output(["openssl", "rsa", "-in", run.webhookKey, "-noout", "-modulus"])
                .stdout
            let n = Base64URL.decode(jwk["n"]?.string ?? "") ?? []
            #expect(modulus.split(separator: "\n").first.map(String.init) == "Modulus=" + hex(n))

            // A v0.1 SubscriberCheck completes at the chain's last hop, through the bearer.
            let env = Dictionary(
                uniqueKeysWithValues: try SimulatedWorld.environment(prefix: prefix).map { ($0.name, $0.value) })
            let id = try #require(env["CELLPATH_CLIENT_ID"]), secret = try #require(env["CELLPATH_CLIENT_SECRET"])
            let token = try #require(
                try JSONValue.parse(
                    curl(
                        prefix,
                        [
                            "-u", "\(id):\(secret)", "-d",
                            "grant_type=client_credentials&scope=subscriber_check",
                            "https://api.truid.test/oauth2/v1/token"
                        ]))["access_token"]?.string)
            let check = try JSONValue.parse(
                curl(
                    prefix,
                    [
                        "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                        "-d", #"{"phone_number":"+447940448591"}"#,
                        "https://api.truid.test/subscriber_check/v0.1/checks"
                    ]))
            let checkID = try #require(check["check_id"]?.string)
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            _ = try curl(
                prefix,
                [
                    "-L", "--interface", "wwan0", "--resolve", "api.truid.test:443:203.0.113.10",
                    "--resolve", "mno.carrier.test:80:100.64.0.1",
                    try #require(check["_links"]?["check_url"]?["href"]?.string)
                ])

            Poll.until(timeout: .seconds(5), interval: .milliseconds(50)) { received.withLock { !$0.isEmpty } }
            let webhook = try #require(received.withLock { $0.first })
            #expect(webhook.method == "POST")
            #expect(webhook.path == "/hook")
            #expect(webhook.remoteAddress == "192.0.2.1")  // from cp-inet, through the Wi-Fi gateway
            #expect(webhook.headers["x-tru-callback"] == "subscriber_check")
            let authorization = try #require(webhook.headers["Authorization"])
            #expect(
                authorization.hasPrefix("Signature keyId=\"\(jwk["kid"]?.string ?? "?")\",algorithm=\"rsa-sha256\""))
            let body = try JSONValue.parse(String(decoding: webhook.body, as: UTF8.self))
            #expect(body["check_id"]?.string == checkID)
            #expect(body["status"]?.string == "COMPLETED")
            #expect(body["match"]?.bool == true)
        }
    }

    private func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }
}
