import CellpathCore
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// The failures docs/providers.md lists for Twilio Verify SNA, Vonage Verify silent_auth and
/// Vonage's CIBA (`sim-swap --provider vonage`), each injected by the scenario's `providers` into
/// the world's fake and ended by cellpath with its documented exit code and message; per provider
/// also Wi-Fi refused, Ctrl-C, and the secrets of a run masked. (Match and no match:
/// VerifyEndToEndTests; Number Verification's faults: NumberVerificationEndToEndTests.)
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ProviderFaultsEndToEndTests {
    static let ownNumber = VerifyEndToEndTests.ownNumber

    /// A fault of the scenario's `providers` and what cellpath makes of it.
    struct Fault: Sendable, CustomTestStringConvertible {
        var name: String
        var inject: @Sendable (inout ProviderFaults) -> Void
        var exitCode: Int32
        /// Part of the error's message (or, for a verdict, of the output).
        var message: String
        var testDescription: String { name }
    }

    static let twilioFaults = [
        Fault(
            name: "carrier unsupported (-30)", inject: { $0.twilio.snaErrorCode = -30 }, exitCode: 69,
            message: "ErrorCode=-30"),
        Fault(name: "dual SIM (-32)", inject: { $0.twilio.snaErrorCode = -32 }, exitCode: 69, message: "ErrorCode=-32"),
        Fault(
            name: "invalid number (-40)", inject: { $0.twilio.snaErrorCode = -40 }, exitCode: 69,
            message: "ErrorCode=-40"),
        Fault(
            name: "no carrier header (60533)", inject: { $0.twilio.attemptErrorCode = 60533 }, exitCode: 69,
            message: "60533"),
        Fault(
            name: "invalid number (60540)", inject: { $0.twilio.attemptErrorCode = 60540 }, exitCode: 65,
            message: "60540"),
        Fault(name: "expired", inject: { $0.twilio.expired = true }, exitCode: 65, message: "expired"),
        Fault(name: "rate limited (60203)", inject: { $0.twilio.rateLimited = true }, exitCode: 75, message: "60203")
    ]

    static let vonageFaults = [
        Fault(
            name: "user rejected", inject: { $0.vonage.silentAuthStatus = .userRejected }, exitCode: 1,
            message: "user_rejected"),
        Fault(
            name: "carrier unsupported (failed)", inject: { $0.vonage.silentAuthStatus = .failed }, exitCode: 69,
            message: "failed"),
        Fault(name: "expired", inject: { $0.vonage.silentAuthStatus = .expired }, exitCode: 65, message: "expired"),
        Fault(name: "concurrent (409)", inject: { $0.vonage.concurrent = true }, exitCode: 75, message: "request_id"),
        Fault(name: "rate limited (429)", inject: { $0.vonage.rateLimited = true }, exitCode: 75, message: "429"),
        Fault(
            name: "another request_id", inject: { $0.vonage.wrongRequestID = true }, exitCode: 76,
            message: "another request's id"),
        Fault(
            name: "wrong state (409 on the code)", inject: { $0.vonage.wrongState = true }, exitCode: 65,
            message: "takes no code")
    ]

    static let cibaFaults = [
        Fault(
            name: "authorization_pending", inject: { $0.vonageNV.backchannelError = .authorizationPending },
            exitCode: 75, message: "authorization_pending"),
        Fault(
            name: "slow_down", inject: { $0.vonageNV.backchannelError = .slowDown }, exitCode: 75,
            message: "slow_down"),
        Fault(
            name: "expired_token", inject: { $0.vonageNV.backchannelError = .expiredToken }, exitCode: 65,
            message: "expired_token"),
        Fault(
            name: "access_denied", inject: { $0.vonageNV.backchannelError = .accessDenied }, exitCode: 69,
            message: "access_denied")
    ]

    /// `verify --provider PROVIDER` in a world with `fault`: its exit code and message, the
    /// device leg (if any) on the bearer, the bearer down after.
    static func expectVerify(_ provider: String, _ fault: Fault) throws {
        var scenario = VerifyEndToEndTests.scenario
        fault.inject(&scenario.providers)
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try device.cellpath(["verify", Self.ownNumber, "--provider", provider, "--json"])
            #expect(result.status == fault.exitCode, "\(result.stdout)\(result.stderr)")
            let json = try JSONValue.parse(result.stdout)
            let said = json["error"]?["message"]?.string ?? json["status"]?.string ?? ""
            #expect(said.contains(fault.message), "\(result.stdout)")
            let hops = json["check_url"]?["hops"]?.array ?? []
            #expect(hops.allSatisfy { $0["local_address"]?.string == VerifyEndToEndTests.bearerAddress })
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
        }
    }

    @Test(arguments: twilioFaults)
    func twilioFaultsEndAsDocumented(_ fault: Fault) throws {
        try Self.expectVerify("twilio", fault)
    }

    @Test(arguments: vonageFaults)
    func vonageFaultsEndAsDocumented(_ fault: Fault) throws {
        try Self.expectVerify("vonage", fault)
    }

    /// Credentials the provider refuses (401, a setting of the caller's overriding the world's
    /// profile): a configuration error (78) whose hint names the profile's settings to check.
    @Test(arguments: [
        (
            "twilio", "CELLPATH_TWILIO_AUTH_TOKEN=wrong", "Twilio refused the credentials (401",
            "check [twilio] account_sid and auth_token"
        ),
        (
            "vonage", "CELLPATH_VONAGE_APPLICATION_ID=wrong", "Vonage refused the credentials (401)",
            "check [vonage] application_id and private_key"
        )
    ])
    func refusedCredentialsAreAConfigurationError(
        _ provider: String, _ setting: String, _ message: String, _ hint: String
    ) throws {
        try SimulatedDevice.with(VerifyEndToEndTests.scenario, connect: false) { device in
            let result = try CellpathBinary.run([
                "sim", "exec", "--prefix", device.prefix, "--", "env", setting, CellpathBinary.path, "verify",
                Self.ownNumber, "--provider", provider, "--json"
            ])
            #expect(result.status == 78, "\(result.stdout)\(result.stderr)")
            let error = try JSONValue.parse(result.stdout)["error"]
            #expect(error?["message"]?.string?.contains(message) == true, "\(result.stdout)")
            #expect(error?["hint"]?.string?.contains(hint) == true, "\(result.stdout)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
        }
    }

    /// `sim-swap --provider vonage` when CIBA's token request never gives a token: pending and
    /// slow_down after the polls (75), expired (65), refused (69).
    @Test(arguments: cibaFaults)
    func vonageCIBAFaultsEndAsDocumented(_ fault: Fault) throws {
        var scenario = VerifyEndToEndTests.scenario
        fault.inject(&scenario.providers)
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try device.cellpath(["sim-swap", Self.ownNumber, "--provider", "vonage", "--json"])
            #expect(result.status == fault.exitCode, "\(result.stdout)\(result.stderr)")
            let error = try JSONValue.parse(result.stdout)["error"]
            #expect(error?["message"]?.string?.contains(fault.message) == true, "\(result.stdout)")
            #expect(!result.stdout.contains("4479404485") && !result.stderr.contains("4479404485"))
        }
    }

    /// Forced over Wi-Fi the providers cannot identify the subscriber: Twilio's -31, Vonage's
    /// `failed`, both 69.
    @Test(arguments: [("twilio", "ErrorCode=-31"), ("vonage", "failed")])
    func wifiIsRefused(_ provider: String, _ message: String) throws {
        try SimulatedDevice.with(VerifyEndToEndTests.scenario, connect: false) { device in
            let forced = try device.cellpath([
                "verify", Self.ownNumber, "--provider", provider, "--interface", "wlan0", "--dns", "192.0.2.1",
                "--allow-any-interface", "--json"
            ])
            #expect(forced.status == 69, "\(forced.stdout)\(forced.stderr)")
            let error = try JSONValue.parse(forced.stdout)["error"]
            #expect(error?["message"]?.string?.contains(message) == true, "\(forced.stdout)")
        }
    }

    /// Ctrl-C while the bearer comes up and the verification is created: 130, the bearer down,
    /// no address left on the modem's interface.
    @Test(arguments: ["twilio", "vonage", "camara", "vonage-nv"])
    func ctrlCLeavesNothingBehind(_ provider: String) throws {
        var scenario = VerifyEndToEndTests.scenario
        // Slow enough that the bearer is still coming up at the signal (about 4 answers).
        scenario.modems[0].faults.responseDelayMs = 400
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try ProcessRunner.run(
                [
                    CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path,
                    "verify", Self.ownNumber, "--provider", provider, "-m", "0"
                ],
                environment: [
                    "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
                    "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
                ],
                signals: [(after: 0.8, signal: SIGINT)])
            #expect(result.status == 130, "\(result.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("inet ") == false)
        }
    }

    /// Vonage's code, in the fragment of the `--redirect-url` its chain stops at, is masked
    /// unless `--verbose-full`; the number is masked in the output and the log lines.
    @Test func vonagesCodeIsMaskedUnlessVerboseFull() throws {
        try SimulatedDevice.with(VerifyEndToEndTests.scenario, connect: false) { device in
            let arguments = [
                "verify", Self.ownNumber, "--provider", "vonage", "--redirect-url", "https://app.example/done", "--json"
            ]
            let full = try device.cellpath(arguments + ["--verbose-full"])
            #expect(full.status == 0, "\(full.stderr)")
            let revealed = try JSONValue.parse(full.stdout)["check_url"]?["result"]?["stopped_at"]?.string ?? ""
            let code = try #require(
                revealed.split(separator: "&").first { $0.hasPrefix("code=") }.map { String($0.dropFirst(5)) },
                "\(revealed)")
            #expect(code.count == 8, "\(revealed)")
            let masked = try device.cellpath(arguments + ["-v"])
            #expect(masked.status == 0, "\(masked.stderr)")
            #expect(!masked.stdout.contains("4479404485") && !masked.stderr.contains("4479404485"))
            let stopped = try JSONValue.parse(masked.stdout)["check_url"]?["result"]?["stopped_at"]?.string ?? ""
            #expect(stopped.contains("code=") && !stopped.contains("code=\(code)"), "\(stopped)")
        }
    }
}
