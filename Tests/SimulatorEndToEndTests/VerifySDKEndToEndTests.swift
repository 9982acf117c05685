import CellpathCore
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// The simulator's fake Twilio Verify and Vonage Verify APIs driven by the providers' own server
/// SDKs (PyPI `twilio` and `vonage`, installed by `make provider-sdks` under .build), from the
/// device's Wi-Fi side of a simulated world, as a backend would call them: the fakes must speak
/// what the SDKs send and parse (requests, auth, JWT, bodies, errors).
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct VerifySDKEndToEndTests {
    /// The virtual environment `make provider-sdks` makes.
    static var python: String { Repository.root + "/.build/provider-sdks/bin/python" }

    /// Runs `script` with the SDKs inside the device namespace, trusting the world's CA; its
    /// stdout is one JSON object.
    static func runSDK(_ device: SimulatedDevice, _ script: String, _ arguments: [String]) throws -> JSONValue {
        #expect(access(python, X_OK) == 0, "run 'make provider-sdks' first (make test does)")
        let env = try device.environment()
        let ca = env["CELLPATH_CA_FILE"] ?? ""
        let result = try device.run(
            ["env", "REQUESTS_CA_BUNDLE=\(ca)", "SSL_CERT_FILE=\(ca)", python, "-c", script] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONValue.parse(result.stdout)
    }

    static let twilioScript = """
        import json, os, sys
        from twilio.rest import Client
        from twilio.base.exceptions import TwilioRestException
        client = Client(os.environ["CELLPATH_TWILIO_ACCOUNT_SID"], os.environ["CELLPATH_TWILIO_AUTH_TOKEN"])
        client.verify.base_url = os.environ["CELLPATH_TWILIO_API_BASE"]
        service = client.verify.v2.services(os.environ["CELLPATH_TWILIO_SERVICE_SID"])
        created = service.verifications.create(to=sys.argv[1], channel="sna")
        checked = service.verification_checks.create(verification_sid=created.sid)
        out = {"sid": created.sid, "status": created.status, "url": created.sna["url"],
               "checked": checked.status, "codes": checked.sna_attempts_error_codes}
        try:
            service.verification_checks.create(verification_sid="VE" + "0" * 32)
        except TwilioRestException as error:
            out["missing"] = [error.status, error.code]
        wrong = Client(os.environ["CELLPATH_TWILIO_ACCOUNT_SID"], "wrong")
        wrong.verify.base_url = os.environ["CELLPATH_TWILIO_API_BASE"]
        try:
            wrong.verify.v2.services(os.environ["CELLPATH_TWILIO_SERVICE_SID"]).verifications.create(
                to=sys.argv[1], channel="sna")
        except TwilioRestException as error:
            out["unauthorized"] = [error.status, error.code]
        print(json.dumps(out))
        """

    @Test func twilioPythonSDKCreatesAndChecksAgainstTheFake() throws {
        try SimulatedDevice.with(connect: false) { device in
            // The world's Twilio base URL (the SDK's domain base_url override).
            let json = try Self.runSDK(device, Self.twilioScript, ["+447940448591"])
            #expect(json["sid"]?.string?.hasPrefix("VE") == true, "\(json)")
            #expect(json["status"]?.string == "pending")
            #expect(json["url"]?.string?.hasPrefix("https://verify.twilio.test/v2/sna/") == true)
            #expect(json["checked"]?.string == "pending")
            #expect(json["codes"] == .array([]))
            #expect(json["missing"] == .array([.int(404), .int(20404)]))
            #expect(json["unauthorized"] == .array([.int(401), .int(20003)]))
        }
    }

    static let vonageScript = """
        import json, os, sys
        from vonage import Auth, HttpClientOptions, Vonage
        from vonage_http_client.errors import HttpRequestError
        from vonage_verify import SilentAuthChannel, SmsChannel, VerifyRequest
        auth = Auth(application_id=os.environ["CELLPATH_VONAGE_APPLICATION_ID"],
                    private_key=os.environ["CELLPATH_VONAGE_PRIVATE_KEY"])
        host = os.environ["CELLPATH_VONAGE_API_BASE"].split("://")[1]
        client = Vonage(auth, HttpClientOptions(api_host=host))
        request = VerifyRequest(brand="cellpath", workflow=[SilentAuthChannel(to=sys.argv[1]), SmsChannel(to=sys.argv[1])])
        started = client.verify.start_verification(request)
        out = {"request_id": started.request_id, "check_url": started.check_url}
        try:
            client.verify.start_verification(request)
        except HttpRequestError as error:
            out["concurrent"] = [error.response.status_code, error.response.json().get("request_id")]
        try:
            client.verify.check_code(started.request_id, "1234")
        except HttpRequestError as error:
            out["early_code"] = error.response.status_code
        try:
            Vonage(Auth(api_key="nobody", api_secret="wrong"), HttpClientOptions(api_host=host)).verify.start_verification(request)
        except HttpRequestError as error:
            out["unauthorized"] = error.response.status_code
        print(json.dumps(out))
        """

    @Test func vonagePythonSDKStartsWithItsJWTAgainstTheFake() throws {
        try SimulatedDevice.with(connect: false) { device in
            let json = try Self.runSDK(device, Self.vonageScript, ["447940448591"])
            let id = try #require(json["request_id"]?.string, "\(json)")
            #expect(json["check_url"]?.string == "https://api.vonage.test/v2/verify/\(id)/silent-auth/redirect")
            #expect(json["concurrent"] == .array([.int(409), .string(id)]))
            #expect(json["early_code"] == .int(409))
            #expect(json["unauthorized"] == .int(401))
        }
    }
}
