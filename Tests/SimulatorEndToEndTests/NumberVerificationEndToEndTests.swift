import CellpathCore
import SimulatorScenario
import TestSupport
import Testing

/// `cellpath verify --provider camara|vonage-nv` in the simulated world, against the fake CAMARA
/// operator and the fake Vonage Number Verification: the device leg over the bearer ends at the
/// redirect URI unrequested, the token and `verify` go over Wi-Fi, the verdicts and their exit
/// codes, the device leg refused over Wi-Fi, the code masked without `--verbose-full`.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct NumberVerificationEndToEndTests {
    static let ownNumber = VerifyEndToEndTests.ownNumber
    static let bearerAddress = VerifyEndToEndTests.bearerAddress

    /// A provider's rule set, its authorize path and its API's `verify` path in the world.
    struct Flavour: Sendable, CustomTestStringConvertible {
        var provider: String
        var deviceLeg: String
        var redirectURI: String
        var authorizePath: String
        var verifyPath: String
        var testDescription: String { provider }
    }

    static let flavours = [
        Flavour(
            provider: "camara", deviceLeg: "camara-oidc", redirectURI: "https://operator.camara.test/client/callback",
            authorizePath: "/oauth2/authorize", verifyPath: "/number-verification/v2/verify"),
        Flavour(
            provider: "vonage-nv", deviceLeg: "vonage-nv-oidc",
            redirectURI: "https://api-eu.vonage.test/client/callback", authorizePath: "/oauth2/auth",
            verifyPath: "/camara/number-verification/v031/verify")
    ]

    @Test(arguments: flavours)
    func verifiesTheSIMsNumberAndNotAnother(_ flavour: Flavour) throws {
        try SimulatedDevice.with(VerifyEndToEndTests.scenario, connect: false) { device in
            let mark = try device.requestLog().count
            let verified = try device.cellpath(["verify", Self.ownNumber, "--provider", flavour.provider, "--json"])
            #expect(verified.status == 0, "\(verified.stderr)")
            let json = try JSONValue.parse(verified.stdout)
            #expect(json["outcome"]?.string == "verified")
            #expect(json["device_leg"]?.string == flavour.deviceLeg)
            #expect(json["phone_number"]?.string == "+••••91")
            #expect(VerifyEndToEndTests.chainStayedOnTheBearer(json), "\(verified.stdout)")
            let stopped = json["check_url"]?["result"]?["stopped_at"]?.string ?? ""
            #expect(stopped.hasPrefix(flavour.redirectURI + "?"), "\(verified.stdout)")
            let log = Array(try device.requestLog().dropFirst(mark))
            func requests(_ path: String) -> [JSONValue] {
                log.filter { $0["path"]?.string?.hasPrefix(path) == true }
            }
            // The authorize request from the bearer; the redirect URI never requested.
            let authorize = requests(flavour.authorizePath)
            #expect(authorize.count == 1 && authorize[0]["source"]?.string == Self.bearerAddress, "\(log)")
            #expect(requests("/client/callback").isEmpty, "\(log)")
            // The code exchanged and verify asked over Wi-Fi, never through the bearer.
            let backend = requests("/oauth2/token") + requests(flavour.verifyPath)
            #expect(backend.count == 2, "\(log)")
            #expect(backend.allSatisfy { $0["source"]?.string != Self.bearerAddress }, "\(log)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")

            let other = try device.cellpath(["verify", "+447940448592", "--provider", flavour.provider, "--json"])
            #expect(other.status == 1, "\(other.stderr)")
            #expect(try JSONValue.parse(other.stdout)["outcome"]?.string == "not_verified")

            let hashed = try device.cellpath(["verify", Self.ownNumber, "--provider", flavour.provider, "--hashed"])
            #expect(hashed.status == 0, "\(hashed.stderr)")
            #expect(hashed.stdout.hasPrefix("+••••91: verified"), "\(hashed.stdout)")
        }
    }

    /// Field mode: three runs on one bearer, JSON Lines and the summary last.
    @Test(arguments: flavours)
    func repeatsOnOneBearer(_ flavour: Flavour) throws {
        try SimulatedDevice.with(VerifyEndToEndTests.scenario, connect: false) { device in
            let result = try device.cellpath([
                "verify", Self.ownNumber, "--provider", flavour.provider, "--repeat", "3", "--interval", "0", "--json"
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = try result.stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }
            #expect(lines.count == 4, "\(result.stdout)")
            #expect(lines.prefix(3).allSatisfy { $0["outcome"]?.string == "verified" }, "\(result.stdout)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
        }
    }

    /// Over Wi-Fi the operator cannot identify the device: the authorization ends with
    /// `error=access_denied` at the redirect URI, exit 69.
    @Test(arguments: flavours)
    func wifiIsRefused(_ flavour: Flavour) throws {
        try SimulatedDevice.with(connect: false) { device in
            let forced = try device.cellpath([
                "verify", Self.ownNumber, "--provider", flavour.provider, "--interface", "wlan0", "--dns", "192.0.2.1",
                "--allow-any-interface", "--json"
            ])
            #expect(forced.status == 69, "\(forced.stderr)")
            let error = try JSONValue.parse(forced.stdout)["error"]
            #expect(error?["message"]?.string?.contains("access_denied") == true, "\(forced.stdout)")
        }
    }

    /// The code the redirect URI carried is masked unless `--verbose-full`.
    @Test(arguments: flavours)
    func theCodeIsMaskedUnlessVerboseFull(_ flavour: Flavour) throws {
        try SimulatedDevice.with(VerifyEndToEndTests.scenario, connect: false) { device in
            let masked = try device.cellpath(["verify", Self.ownNumber, "--provider", flavour.provider, "--json", "-v"])
            #expect(masked.status == 0, "\(masked.stderr)")
            let stopped = try JSONValue.parse(masked.stdout)["check_url"]?["result"]?["stopped_at"]?.string ?? ""
            #expect(stopped.contains("code=[redacted]"), "\(stopped)")
            let full = try device.cellpath([
                "verify", Self.ownNumber, "--provider", flavour.provider, "--json", "--verbose-full"
            ])
            #expect(full.status == 0, "\(full.stderr)")
            let revealed = try JSONValue.parse(full.stdout)["check_url"]?["result"]?["stopped_at"]?.string ?? ""
            let code = revealed.split(separator: "?").last?.split(separator: "&").first { $0.hasPrefix("code=") }
                .map { String($0.dropFirst("code=".count)) }
            #expect(code.map { $0.count == 32 } == true, "\(revealed)")
            #expect(!masked.stderr.contains(code ?? "-") && !masked.stdout.contains(code ?? "-"))
        }
    }

    /// A documented failure: a configured redirect URI the operator has not registered is
    /// refused by its authorize page (400, never a redirect), exit 65.
    @Test(arguments: flavours)
    func anUnregisteredRedirectURIIsRefused(_ flavour: Flavour) throws {
        try SimulatedDevice.with(VerifyEndToEndTests.scenario, connect: false) { device in
            let variable =
                flavour.provider == "camara" ? "CELLPATH_CAMARA_REDIRECT_URI" : "CELLPATH_VONAGE_REDIRECT_URI"
            let result = try CellpathBinary.run([
                "sim", "exec", "--prefix", device.prefix, "--", "env", "\(variable)=\(flavour.redirectURI)-elsewhere",
                CellpathBinary.path, "verify", Self.ownNumber, "--provider", flavour.provider, "--json"
            ])
            #expect(result.status == 65, "\(result.stdout)\(result.stderr)")
            let json = try JSONValue.parse(result.stdout)
            #expect(json["error"]?["reason"]?.string == "badRequest", "\(result.stdout)")
            #expect(
                json["check_url"]?["result"]?["stopped_at"] == nil
                    || json["check_url"]?["result"]?["stopped_at"]?.isNull == true)
        }
    }

    /// A fault of the scenario's `providers` and what `verify` makes of it.
    struct Fault: Sendable, CustomTestStringConvertible {
        var name: String
        var inject: @Sendable (inout OIDCFaults) -> Void
        var exitCode: Int32
        /// Part of the error's message.
        var message: String
        var testDescription: String { name }
    }

    static let faults = [
        Fault(
            name: "user rejected", inject: { $0.authorizationError = .accessDenied }, exitCode: 69,
            message: "access_denied"),
        Fault(
            name: "consent required", inject: { $0.authorizationError = .consentRequired }, exitCode: 69,
            message: "consent_required"),
        Fault(
            name: "temporarily unavailable", inject: { $0.authorizationError = .temporarilyUnavailable },
            exitCode: 75, message: "temporarily_unavailable"),
        Fault(name: "wrong state", inject: { $0.wrongState = true }, exitCode: 76, message: "another state"),
        Fault(name: "no state", inject: { $0.missingState = true }, exitCode: 76, message: "another state"),
        Fault(name: "code expired", inject: { $0.codeExpired = true }, exitCode: 65, message: "invalid_grant"),
        Fault(
            name: "carrier unsupported", inject: { $0.notAuthenticatedByMobileNetwork = true }, exitCode: 69,
            message: "USER_NOT_AUTHENTICATED_BY_MOBILE_NETWORK"),
        Fault(name: "mismatched redirect_uri", inject: { $0.redirectElsewhere = true }, exitCode: 65, message: "404")
    ]

    /// Each fault of the scenario, on each provider's fake: the documented exit code, the
    /// redirect URI never requested, the bearer taken down.
    @Test(arguments: flavours, faults)
    func scenarioFaultsEndAsDocumented(_ flavour: Flavour, _ fault: Fault) throws {
        var scenario = VerifyEndToEndTests.scenario
        if flavour.provider == "camara" {
            fault.inject(&scenario.providers.camara)
        } else {
            fault.inject(&scenario.providers.vonageNV)
        }
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try device.cellpath(["verify", Self.ownNumber, "--provider", flavour.provider, "--json"])
            #expect(result.status == fault.exitCode, "\(result.stdout)\(result.stderr)")
            let error = try JSONValue.parse(result.stdout)["error"]
            #expect(error?["message"]?.string?.contains(fault.message) == true, "\(result.stdout)")
            #expect(try device.requestLog().allSatisfy { $0["path"]?.string != "/client/callback" })
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
        }
    }

    /// With `--sim-swap-within`, a verified number's SIM change is asked of the operator's SIM
    /// Swap (CAMARA's with client credentials, Vonage's by CIBA), over Wi-Fi: verified but
    /// changed within the period is 2, as a SubscriberCheck's; a number not verified is 1 without asking.
    @Test(arguments: flavours)
    func aSIMChangeWithinThePeriodIsExitTwo(_ flavour: Flavour) throws {
        var scenario = VerifyEndToEndTests.scenario
        scenario.modems[0].sim?.simChangedMinutesAgo = 90
        try SimulatedDevice.with(scenario, connect: false) { device in
            let base = ["verify", Self.ownNumber, "--provider", flavour.provider, "--json", "--sim-swap-within"]
            let mark = try device.requestLog().count
            let changed = try device.cellpath(base + ["2"])
            #expect(changed.status == 2, "\(changed.stdout)\(changed.stderr)")
            let json = try JSONValue.parse(changed.stdout)
            #expect(json["outcome"]?.string == "sim_changed" && json["no_sim_change"] == .bool(false), "\(json)")
            #expect(json["last_sim_change_at"]?.string?.hasSuffix("Z") == true, "\(json)")
            let swaps = Array(try device.requestLog().dropFirst(mark)).filter {
                $0["path"]?.string?.contains("sim-swap") == true
            }
            #expect(swaps.count == 2 && swaps.allSatisfy { $0["source"]?.string != Self.bearerAddress }, "\(swaps)")

            let unchanged = try device.cellpath(base + ["1"])
            #expect(unchanged.status == 0, "\(unchanged.stdout)\(unchanged.stderr)")
            #expect(try JSONValue.parse(unchanged.stdout)["no_sim_change"] == .bool(true))

            let before = try device.requestLog().count
            let other = try device.cellpath([
                "verify", "+447940448592", "--provider", flavour.provider, "--sim-swap-within", "2"
            ])
            #expect(other.status == 1, "\(other.stdout)\(other.stderr)")
            let asked = Array(try device.requestLog().dropFirst(before))
            #expect(!asked.contains { $0["path"]?.string?.contains("sim-swap") == true }, "\(asked)")
        }
    }

    /// `verify --provider camara` without a number asks the operator for the device's
    /// (`device-phone-number`, its scope, no `login_hint`) instead of reading the SIM's: the
    /// number it tells is the run's, masked unless `--verbose-full`; vonage-nv, whose operator
    /// offers no such call, verifies the SIM's own number.
    @Test func camaraWithoutANumberTellsTheDevicesNumber() throws {
        try SimulatedDevice.with(VerifyEndToEndTests.scenario, connect: false) { device in
            let mark = try device.requestLog().count
            let told = try device.cellpath(["verify", "--provider", "camara", "--json", "-v"])
            #expect(told.status == 0, "\(told.stdout)\(told.stderr)")
            #expect(!told.stdout.contains("4479404485") && !told.stderr.contains("4479404485"), "\(told.stderr)")
            let json = try JSONValue.parse(told.stdout)
            #expect(json["phone_number"]?.string == "+••••91" && json["status"]?.string == "shared", "\(json)")
            #expect(VerifyEndToEndTests.chainStayedOnTheBearer(json), "\(told.stdout)")
            let log = Array(try device.requestLog().dropFirst(mark))
            let shared = log.filter { $0["path"]?.string?.hasSuffix("/device-phone-number") == true }
            #expect(shared.count == 1 && shared[0]["source"]?.string != Self.bearerAddress, "\(log)")
            #expect(!log.contains { $0["path"]?.string?.hasSuffix("/verify") == true }, "\(log)")
            let authorize = log.first { $0["path"]?.string?.hasPrefix("/oauth2/authorize") == true }
            #expect(authorize?["path"]?.string?.contains("login_hint") == false, "\(log)")

            let full = try device.cellpath(["verify", "--provider", "camara", "--verbose-full"])
            #expect(full.status == 0, "\(full.stderr)")
            #expect(full.stdout.hasPrefix(Self.ownNumber + ": verified"), "\(full.stdout)")

            let before = try device.requestLog().count
            let vonage = try device.cellpath(["verify", "--provider", "vonage-nv", "--json"])
            #expect(vonage.status == 0, "\(vonage.stderr)")
            #expect(try JSONValue.parse(vonage.stdout)["status"]?.string == "verified")
            let asked = Array(try device.requestLog().dropFirst(before))
            #expect(!asked.contains { $0["path"]?.string?.hasSuffix("/device-phone-number") == true }, "\(asked)")
        }
    }

    @Test func simSwapWithinIsAUsageErrorWithAnotherProvider() throws {
        let result = try CellpathBinary.run([
            "verify", "+447940448591", "--provider", "vonage", "--sim-swap-within", "24"
        ])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(
            result.stderr.contains("'--sim-swap-within' applies to --provider camara or vonage-nv only"),
            "\(result.stderr)")
    }

    @Test func hashedIsAUsageErrorWithAnotherProvider() throws {
        let result = try CellpathBinary.run(["verify", "+447940448591", "--provider", "twilio", "--hashed"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("'--hashed' applies to --provider camara or vonage-nv only"), "\(result.stderr)")
    }

    /// `device-phone-number` tells the number in clear: there is nothing to send hashed.
    @Test(arguments: ["camara", "vonage-nv"])
    func hashedWithoutANumberIsAUsageError(_ provider: String) throws {
        let result = try CellpathBinary.run(["verify", "--provider", provider, "--hashed", "-m", "0"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("'--hashed' needs the number to verify"), "\(result.stderr)")
    }

    @Test func aRedirectURLIsAUsageErrorWithNumberVerification() throws {
        let result = try CellpathBinary.run([
            "verify", "+447940448591", "--provider", "camara", "--redirect-url", "https://app.example/done"
        ])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(
            result.stderr.contains("'--redirect-url' applies to --provider truid, twilio or vonage only"),
            "\(result.stderr)")
    }
}
