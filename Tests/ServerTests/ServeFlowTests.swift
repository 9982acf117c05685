import CellpathCore
import CellpathCrypto
import FoundationEssentials
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

@testable import Server

/// The tutorial's client flows against `cellpath serve` running on the simulated device's
/// network (its Wi-Fi reaches the fake API), the device opening check_url with `cellpath fetch`
/// through wwan0, and the app's calls made with curl in the device namespace.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ServeFlowTests {
    /// A world with a connected bearer and `cellpath serve` on 127.0.0.1:8080 in its device namespace.
    private func withServe(
        _ extra: [String] = [], scenario: Scenario? = nil, listen: String = "127.0.0.1:8080",
        _ body: (String) throws -> Void
    ) throws {
        try WorldFixture.withWorld(scenario: scenario) { (prefix: String) throws in
            let bearer = try CellpathBinary.run(["sim", "bearer", "connect", "--prefix", prefix])
            try #require(bearer.status == 0, "\(bearer.stderr)")
            let log = "/tmp/\(prefix)serve.log"
            defer { unlink(log) }
            let serve = try BackgroundProcess(
                [
                    "ip", "netns", "exec", prefix + "ue", CellpathBinary.path, "serve",
                    "--api-base", "https://api.truid.test",
                    "--listen", listen
                ] + extra,
                output: log, environment: try simEnvironment(prefix))
            defer { serve.stop() }
            try waitUntilListening(prefix, log: log)
            try body(prefix)
            kill(serve.pid, SIGTERM)
            #expect(
                serve.wait(timeoutMs: 10_000) && serve.exitStatus == 0,
                "serve did not exit 0 on SIGTERM: \(String(describing: serve.exitStatus))")
            let lines = try ProcessRunner.run(["cat", log]).stdout
            #expect(lines.contains(#""event":"stopped""#))
            // The log is JSON Lines to the end, the signal's notice included.
            #expect(lines.contains(#"{"event":"cancelling","signal":"SIGTERM"}"#), "\(lines)")
            for line in lines.split(separator: "\n") {
                #expect(JSONValue.parse(Array(line.utf8)) != nil, "not JSON: \(line)")
            }
            #expect(!lines.contains("447940448591"), "the access log holds a phone number")
        }
    }

    /// The credentials `cellpath sim env` prints, with a PATH.
    private func simEnvironment(_ prefix: String) throws -> [String: String] {
        var environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/tmp/\(prefix)home"]
        for line in try CellpathBinary.run(["sim", "env", "--prefix", prefix]).stdout.split(separator: "\n")
        where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count)
            guard let eq = assignment.firstIndex(of: "=") else { continue }
            environment[String(assignment[..<eq])] = String(
                assignment[assignment.index(after: eq)...].filter { $0 != "'" })
        }
        return environment
    }

    private func waitUntilListening(_ prefix: String, log: String) throws {
        if Poll.until(timeout: .seconds(10), { FileSystem.readText(log)?.contains(#""event":"listening""#) == true }) {
            return
        }
        throw CellpathError(.temporary, "serve did not start: \(try ProcessRunner.run(["cat", log]).stdout)")
    }

    /// curl in the device namespace; returns status and body.
    private func curl(_ prefix: String, _ arguments: [String]) throws -> (status: Int, json: JSONValue?) {
        let result = try Curl.run(in: prefix + "ue", ["-w", "\n%{http_code}"] + arguments)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, try? JSONValue.parse(lines.dropLast().joined(separator: "\n")))
    }

    private func post(_ prefix: String, _ path: String, json: String) throws -> (status: Int, json: JSONValue?) {
        try curl(prefix, ["-H", "Content-Type: application/json", "-d", json, "http://127.0.0.1:8080\(path)"])
    }

    /// `cellpath fetch` on the device through wwan0; the JSON result.
    private func openCheckURL(_ prefix: String, _ url: String) throws -> JSONValue {
        let result = try CellpathBinary.run([
            "sim", "exec", "--prefix", prefix, "--", CellpathBinary.path, "fetch", "--interface", "wwan0",
            "--dns", "100.64.0.53", url, "--json"
        ])
        #expect(result.status == 0, "fetch: \(result.stderr)")
        return try JSONValue.parse(result.stdout)
    }

    @Test func subscriberCheckV01PathFormAndQueryForm() throws {
        try withServe { (prefix: String) throws in
            let created = try post(prefix, "/subscriber-check", json: #"{"phone_number":"+447940448591"}"#)
            #expect(created.status == 200)
            let id = try #require(created.json?["check_id"]?.string),
                url = try #require(created.json?["check_url"]?.string)
            _ = try openCheckURL(prefix, url)
            let byPath = try curl(prefix, ["http://127.0.0.1:8080/subscriber-check/\(id)"])
            #expect(
                byPath.status == 200 && byPath.json?["match"]?.bool == true && byPath.json?["check_id"]?.string == id)
            #expect(byPath.json?["no_sim_change"]?.bool == true)
            let byQuery = try curl(prefix, ["http://127.0.0.1:8080/v0.1/subscriber-check?check_id=\(id)"])
            #expect(byQuery.status == 200 && byQuery.json?["match"]?.bool == true)
        }
    }

    @Test func subscriberCheckV02WithExchangeCodeByGetAndPost() throws {
        try withServe { (prefix: String) throws in
            for method in ["GET", "POST"] {
                let created = try post(
                    prefix, "/v0.2/subscriber-check",
                    json: #"{"phone_number":"+447940448591","redirect_url":"https://app.example/cb"}"#)
                let id = try #require(created.json?["check_id"]?.string),
                    url = try #require(created.json?["check_url"]?.string)
                let code = try #require(try openCheckURL(prefix, url)["result"]?["callback"]?["code"]?.string)
                let exchanged =
                    method == "GET"
                    ? try curl(
                        prefix,
                        ["http://127.0.0.1:8080/v0.2/subscriber-check/exchange-code?check_id=\(id)&code=\(code)"])
                    : try post(
                        prefix, "/v0.2/subscriber-check/exchange-code",
                        json: #"{"check_id":"\#(id)","code":"\#(code)"}"#)
                #expect(exchanged.status == 200, "\(method)")
                #expect(
                    exchanged.json?["match"]?.bool == true && exchanged.json?["check_id"]?.string == id
                        && exchanged.json?["no_sim_change"]?.bool == true)
            }
            let wrongMethod = try curl(
                prefix, ["-X", "PUT", "http://127.0.0.1:8080/v0.2/subscriber-check/exchange-code"])
            #expect(wrongMethod.status == 405)
            let noCode = try post(prefix, "/v0.2/subscriber-check/exchange-code", json: #"{"check_id":"x"}"#)
            #expect(noCode.status == 400 && noCode.json?["error_message"]?.string == "code parameter is required")
        }
    }

    @Test func phoneCheckSimCheckAndCoverageToken() throws {
        try withServe(["--allow-form-bodies", "--coverage-token-route"]) { (prefix: String) throws in
            let created = try curl(prefix, ["-d", "phone_number=%2B447940448591", "http://127.0.0.1:8080/phone-check"])
            let id = try #require(created.json?["check_id"]?.string),
                url = try #require(created.json?["check_url"]?.string)
            _ = try openCheckURL(prefix, url)
            let result = try curl(prefix, ["http://127.0.0.1:8080/phone-check?check_id=\(id)"])
            #expect(result.status == 200 && result.json?["match"]?.bool == true && result.json?["no_sim_change"] == nil)
            let sim = try post(prefix, "/sim-check", json: #"{"phone_number":"+447940448591"}"#)
            #expect(sim.status == 200 && sim.json?["no_sim_change"]?.bool == true)
            let token = try curl(prefix, ["http://127.0.0.1:8080/coverage-access-token"])
            #expect(
                token.json?["url"]?.string == "https://api.truid.test/coverage/v0.1/device_ip"
                    && token.json?["token"]?.string != nil)
        }
    }

    @Test func badInputIsRefusedWithClearAnswers() throws {
        try withServe(["--max-body", "1024"]) { (prefix: String) throws in
            #expect(
                try post(prefix, "/subscriber-check", json: "{}") == (
                    400, .object([("error_message", .string("phone_number parameter is required"))])
                ))
            let invalid = try post(prefix, "/subscriber-check", json: #"{"phone_number":"+44123"}"#)
            #expect(
                invalid.status == 400
                    && invalid.json?["error_message"]?.string?.hasPrefix("phone_number is not a valid phone number")
                        == true
            )
            #expect(try post(prefix, "/subscriber-check", json: #"{"phone_number":12}"#).status == 400)
            #expect(
                try post(prefix, "/subscriber-check", json: #"{"phone_number":"+447940448591\r\nX"}"#).status == 400)
            #expect(
                try post(prefix, "/subscriber-check", json: String(repeating: " ", count: 4096) + "{}").status == 413)
            #expect(try curl(prefix, ["http://127.0.0.1:8080/no-such-route"]).status == 404)
            #expect(try curl(prefix, ["-X", "DELETE", "http://127.0.0.1:8080/sim-check"]).status == 405)
            let unknownCheck = try curl(prefix, ["http://127.0.0.1:8080/subscriber-check/0000"])
            #expect(unknownCheck.status == 404 && unknownCheck.json?["title"] != nil)  // the API's problem, passed on
        }
    }

    @Test func aClientKeyIsRequiredWhenConfigured() throws {
        let keyFile = "/tmp/cellpath-serve-key-\(getpid())"
        let fd = open(keyFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = Array("0123456789abcdef-key\n".utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        defer { unlink(keyFile) }
        try withServe(["--api-key-file", keyFile, "--coverage-token-route"]) { (prefix: String) throws in
            #expect(try curl(prefix, ["http://127.0.0.1:8080/coverage-access-token"]).status == 401)
            #expect(
                try curl(
                    prefix, ["-H", "X-Api-Key: wrong-key-wrong-key", "http://127.0.0.1:8080/coverage-access-token"]
                ).status == 401)
            #expect(
                try curl(
                    prefix, ["-H", "X-Api-Key: 0123456789abcdef-key", "http://127.0.0.1:8080/coverage-access-token"]
                ).status == 200)
            #expect(
                try curl(
                    prefix,
                    ["-H", "Authorization: Bearer 0123456789abcdef-key", "http://127.0.0.1:8080/coverage-access-token"]
                ).status == 200)
        }
    }

    @Test func webhooksAreVerifiedAgainstTheAPIsKeySet() throws {
        var scenario = Scenario.builtIn
        scenario.api.callbackURL = "http://192.0.2.23:8080/callback"
        try withServe(scenario: scenario, listen: "0.0.0.0:8080") { (prefix: String) throws in
            let log = "/tmp/\(prefix)serve.log"
            let created = try post(prefix, "/subscriber-check", json: #"{"phone_number":"+447940448591"}"#)
            let id = try #require(created.json?["check_id"]?.string),
                url = try #require(created.json?["check_url"]?.string)
            _ = try openCheckURL(prefix, url)  // v0.1: COMPLETED at the last hop, then the API posts the webhook
            var lines = ""
            Poll.until(timeout: .seconds(10), interval: .milliseconds(50)) {
                lines = FileSystem.readText(log) ?? ""
                return lines.contains(#""check_id":"\#(id)""#)
            }
            #expect(
                lines.contains(#"{"webhook":"subscriber_check","check_id":"\#(id)","status":"COMPLETED"}"#), "\(lines)")
            #expect(lines.contains(#""route":"/callback","status":200"#), "\(lines)")

            // A forgery with the published keyId, a right Digest and a fresh Date, but no valid signature.
            let keys = try Curl.onDevice(of: prefix, ["https://api.truid.test/.well-known/jwks.json"]).stdout
            let keyID = try #require(try JSONValue.parse(keys)["keys"]?.array?.first?["kid"]?.string)
            let body = #"{"check_id":"\#(id)","status":"COMPLETED","match":true}"#
            let digest = "SHA-256=" + Data(Digest.sha256(Array(body.utf8))).base64EncodedString()
            let date = try ProcessRunner.run(
                ["date", "-u", "+%a, %d %b %Y %H:%M:%S GMT"], environment: ["LC_ALL": "C", "PATH": "/usr/bin:/bin"]
            )
            .stdout.filter { $0 != "\n" }
            let signature =
                #"keyId="\#(keyID)",algorithm="rsa-sha256",headers="(request-target) host date x-tru-callback digest",signature="\#(Data(repeating: 7, count: 256).base64EncodedString())""#
            let forged = try curl(
                prefix,
                [
                    "-H", "Content-Type: application/json", "-H", "Date: \(date)", "-H", "Digest: \(digest)",
                    "-H", "x-tru-callback: subscriber_check", "-H", "Authorization: Signature \(signature)",
                    "-d", body, "http://127.0.0.1:8080/callback"
                ])
            #expect(
                forged.status == 400
                    && forged.json?["error_message"]?.string == "the webhook does not verify: bad signature")
            let unsigned = try curl(
                prefix,
                ["-H", "Content-Type: application/json", "-d", body, "http://127.0.0.1:8080/phone-check/callback"])
            #expect(
                unsigned.status == 400
                    && unsigned.json?["error_message"]?.string == "the webhook does not verify: no signature")
        }
    }
}
