import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// `cellpath serve --provider truid|twilio|vonage|camara` in the simulated world: the tutorial
/// app's flow against serve, running in the device namespace with the world's credentials, each
/// provider's routes answered by its fake API, a 501 for a route it cannot serve, and `/metrics`
/// labelled with the provider.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ServeProvidersEndToEndTests {
    static let ownNumber = "+447940448591"
    static let otherNumber = "+447940448592"
    static let base = "http://127.0.0.1:8080"
    static let server = ["--server", base]

    static var scenario: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems[0].sim?.msisdn = ownNumber
        return scenario
    }

    /// Runs `body` while `cellpath serve ARGS…` listens on 127.0.0.1:8080 in the device namespace,
    /// with the world's environment and `extra`.
    static func withServe(
        _ device: SimulatedDevice, _ arguments: [String], extra: [String: String] = [:], _ body: () throws -> Void
    ) throws {
        let log = "/tmp/\(device.prefix)serve-provider.log"
        defer { unlink(log) }
        var environment = SimulatedDevice.path
        for (name, value) in try device.environment() { environment[name] = value }
        environment["HOME"] = "/nonexistent"
        environment.merge(extra) { $1 }
        let serve = try BackgroundProcess(
            ["ip", "netns", "exec", device.ue, CellpathBinary.path, "serve", "--listen", "127.0.0.1:8080"] + arguments,
            output: log, environment: environment)
        defer { serve.stop() }
        let listening = Poll.until(timeout: .seconds(10)) {
            (try? FileSystem.read(log, limit: 1 << 16)).map { String(decoding: $0, as: UTF8.self) }?
                .contains("listening") ?? false
        }
        let text = (try? FileSystem.read(log, limit: 1 << 16)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        try #require(listening, "serve did not start: \(text)")
        try body()
    }

    /// A request to serve from the device namespace: its status and JSON body.
    static func call(
        _ device: SimulatedDevice, _ method: String, _ path: String, _ body: String? = nil
    ) throws -> (status: Int, json: JSONValue?) {
        var arguments = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "-X", method]
        if let body { arguments += ["-H", "Content-Type: application/json", "-d", body] }
        let result = try device.run(arguments + [base + path])
        #expect(result.status == 0, "curl \(method) \(path): \(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, try? JSONValue.parse(lines.dropLast().joined(separator: "\n")))
    }

    /// serve's `/metrics` text.
    static func metrics(_ device: SimulatedDevice) throws -> String {
        try device.run(["curl", "-sS", base + "/metrics"]).stdout
    }

    @Test func truIDIsTheDefaultAndLabelsItsMetrics() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            try Self.withServe(device, []) {
                let verified = try device.cellpath(
                    ["subscriber-check", Self.ownNumber, "--api-version", "v0.1", "--json"] + Self.server)
                #expect(verified.status == 0, "\(verified.stderr)")
                let metrics = try Self.metrics(device)
                #expect(
                    metrics.contains(
                        #"cellpath_serve_requests_total{provider="truid",route="/subscriber-check",method="POST",status="200"} 1"#
                    ), "\(metrics)")
                #expect(metrics.contains(#"cellpath_serve_upstream_seconds_count{provider="truid"}"#), "\(metrics)")
            }
        }
    }

    /// Twilio, named by the configuration (`CELLPATH_SERVE_PROVIDER`): the v0.1 flow (create,
    /// open sna.url over the bearer, read the result) verifies the SIM's number and not another.
    @Test func twilioFromTheConfigurationServesTheV01Flow() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            try Self.withServe(device, [], extra: ["CELLPATH_SERVE_PROVIDER": "twilio"]) {
                let mark = try device.requestLog().count
                let verified = try device.cellpath(
                    ["subscriber-check", Self.ownNumber, "--api-version", "v0.1", "--json"] + Self.server)
                #expect(verified.status == 0, "\(verified.stderr)")
                let json = try JSONValue.parse(verified.stdout)
                #expect(json["match"] == .bool(true) && json["no_sim_change"] == .null, "\(json)")
                let log = Array(try device.requestLog().dropFirst(mark))
                #expect(log.contains { $0["path"]?.string?.hasPrefix("/v2/sna/") == true }, "\(log)")
                #expect(
                    log.filter { $0["path"]?.string?.hasPrefix("/v2/Services/") == true }.count == 2, "\(log)")

                let phoneCheck = try device.cellpath(
                    ["phone-check", Self.otherNumber, "--api-version", "v0.1", "--json"] + Self.server)
                #expect(phoneCheck.status == 1, "\(phoneCheck.stderr)")

                let simCheck = try Self.call(device, "POST", "/sim-check", #"{"phone_number":"\#(Self.ownNumber)"}"#)
                #expect(simCheck.status == 501)
                #expect(
                    simCheck.json?["error_message"]?.string?.hasPrefix(
                        "serve --provider twilio does not serve /sim-check")
                        == true, "\(String(describing: simCheck.json))")
                #expect(try Self.call(device, "GET", "/country?country_code=GB").status == 501)
                let metrics = try Self.metrics(device)
                #expect(
                    metrics.contains(
                        #"cellpath_serve_requests_total{provider="twilio",route="/sim-check",method="POST",status="501"} 1"#
                    ), "\(metrics)")
                #expect(metrics.contains(#"provider="twilio",route="/subscriber-check",method="POST",status="200""#))
            }
        }
    }

    /// Vonage: the app creates a v0.2 check, opens its check_url over the bearer and posts the
    /// code it got to exchange-code; a result without the code is 501.
    @Test func vonageServesTheV02FlowWithTheDevicesCode() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            try Self.withServe(device, ["--provider", "vonage"]) {
                let created = try Self.call(
                    device, "POST", "/v0.2/subscriber-check", #"{"phone_number":"\#(Self.ownNumber)"}"#)
                #expect(created.status == 200, "\(String(describing: created.json))")
                let checkID = try #require(created.json?["check_id"]?.string)
                let checkURL = try #require(created.json?["check_url"]?.string)
                #expect(checkURL.hasPrefix("https://api.vonage.test/"), "\(checkURL)")

                try device.bearer(connect: true)
                let opened = try device.fetch(["--verbose-full", checkURL])
                #expect(opened.status == 0, "\(opened.stderr)")
                let code = try #require(opened.json["result"]?["json"]?["code"]?.string, "\(opened.json)")

                let pending = try Self.call(device, "GET", "/v0.2/subscriber-check?check_id=\(checkID)")
                #expect(pending.status == 501, "\(String(describing: pending.json))")
                #expect(pending.json?["error_message"]?.string?.contains("exchange-code") == true)

                let exchanged = try Self.call(
                    device, "POST", "/v0.2/subscriber-check/exchange-code",
                    #"{"check_id":"\#(checkID)","code":"\#(code)"}"#)
                #expect(exchanged.status == 200, "\(String(describing: exchanged.json))")
                #expect(exchanged.json?["match"] == .bool(true) && exchanged.json?["check_id"]?.string == checkID)

                let wrong = try Self.call(
                    device, "POST", "/v0.2/subscriber-check/exchange-code", #"{"check_id":"\#(checkID)","code":"0000"}"#
                )
                #expect(wrong.status == 400, "\(String(describing: wrong.json))")
                #expect(
                    try Self.metrics(device).contains(
                        #"provider="vonage",route="/v0.2/subscriber-check/exchange-code""#))

                // cellpath's own dev-server client runs the same flow: create, the device leg, exchange-code.
                try device.bearer(connect: false)
                let verified = try device.cellpath(["verify", Self.ownNumber, "--json"] + Self.server)
                #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
                #expect(try JSONValue.parse(verified.stdout)["outcome"]?.string == "verified", "\(verified.stdout)")
                // Another number: Vonage ends the device leg with user_rejected, which the dev-server
                // contract's client can only read as the check failing at the operator (69).
                let other = try device.cellpath(["phone-check", Self.otherNumber, "--json"] + Self.server)
                #expect(other.status == 69, "\(other.stdout)\(other.stderr)")
                let error = try JSONValue.parse(other.stdout)["error"]
                #expect(error?["message"]?.string?.contains("user_rejected") == true, "\(other.stdout)")
            }
        }
    }

    /// CAMARA: SIMCheck is SIM Swap over 7 days, the same answer `cellpath sim-swap` reads; the
    /// check routes are 501.
    @Test func camaraServesSIMCheckAsSIMSwap() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            // The operator's credentials are checked at start: a client it does not know is exit 78.
            let refused = try device.run([
                "env", "HOME=/nonexistent", "CELLPATH_CAMARA_CLIENT_ID=unknown-client", CellpathBinary.path, "serve",
                "--provider", "camara", "--listen", "127.0.0.1:8081"
            ])
            #expect(refused.status == 78, "\(refused.stderr)")
            #expect(refused.stderr.contains(#""event":"error""#), "\(refused.stderr)")
            try Self.withServe(device, ["--provider", "camara"]) {
                let simCheck = try Self.call(device, "POST", "/sim-check", #"{"phone_number":"\#(Self.ownNumber)"}"#)
                #expect(simCheck.status == 200, "\(String(describing: simCheck.json))")
                let direct = try device.cellpath(["sim-swap", Self.ownNumber, "--max-age", "168", "--json"])
                let swap = try JSONValue.parse(direct.stdout)
                let swapped = try #require(swap["swapped"]?.bool, "\(direct.stdout)\(direct.stderr)")
                #expect(simCheck.json?["no_sim_change"] == .bool(!swapped), "\(String(describing: simCheck.json))")
                #expect(simCheck.json?["last_sim_change_at"] == swap["latest_sim_change"])
                #expect(simCheck.json?["check_id"]?.string?.isEmpty == false)

                let unknown = try Self.call(device, "POST", "/sim-check", #"{"phone_number":"\#(Self.otherNumber)"}"#)
                #expect(unknown.status == 400, "\(String(describing: unknown.json))")
                #expect(
                    unknown.json?["error_message"]?.string?.contains("IDENTIFIER_NOT_FOUND") == true,
                    "\(String(describing: unknown.json))")

                let subscriberCheck = try Self.call(
                    device, "POST", "/subscriber-check", #"{"phone_number":"\#(Self.ownNumber)"}"#)
                #expect(subscriberCheck.status == 501, "\(String(describing: subscriberCheck.json))")
                let health = try Self.call(device, "GET", "/healthz")
                #expect(health.status == 200 && health.json?["provider"]?.string == "camara")
                #expect(
                    try Self.metrics(device).contains(
                        #"cellpath_serve_requests_total{provider="camara",route="/sim-check",method="POST",status="200"} 1"#
                    ))
            }
        }
    }
}
