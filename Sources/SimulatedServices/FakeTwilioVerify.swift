import CellpathCore
import HTTPServer
import SimulatorScenario
import Synchronization
import SystemSupport

/// The fake Twilio Verify v2 API with the `sna` channel (https://verify.twilio.test), following
/// twilio-oai's `twilio_verify_v2` and Twilio's SNA guides: create a verification (form `To`,
/// `Channel=sna`, Basic AccountSid:AuthToken) → 201 `{sid, status, sna: {url}}`; the device opens
/// `sna.url` once and the answer is a text `ErrorCode=…&ErrorDescription=…&Carrier=…`; the
/// subscriber is identified by the request's source address, as an operator maps a bearer's
/// address to its number, so it succeeds only over the bearer (-31 otherwise, 60510);
/// VerificationCheck → `{status, sna_attempts_error_codes}`, 404 (20404) once approved.
/// Errors are Twilio's JSON `{code, message, more_info, status}`; the scenario's `TwilioFaults`
/// replace these answers with Twilio's documented failures. Safe to call from any thread.
public final class FakeTwilioVerify: SimulatedHTTPEndpoint {
    /// The account and service the fake accepts, and where it says its SNA URLs are.
    public struct Configuration: Sendable {
        public var accountSID: String
        public var authToken: String
        public var serviceSID: String
        /// `https://verify.twilio.test`: the base of `sna.url`.
        public var baseURL: String
        /// Pending verifications of one number before 429 (60203, max send attempts).
        public var maxPendingPerNumber: Int

        public init(
            accountSID: String, authToken: String, serviceSID: String, baseURL: String = "https://verify.twilio.test",
            maxPendingPerNumber: Int = 5
        ) {
            self.accountSID = accountSID
            self.authToken = authToken
            self.serviceSID = serviceSID
            self.baseURL = baseURL
            self.maxPendingPerNumber = maxPendingPerNumber
        }
    }

    /// One verification as the fake remembers it.
    struct Verification: Sendable {
        var sid: String
        var to: String
        var status = "pending"
        var snaOpened = false
        var errorCodes: [Int] = []
    }

    let configuration: Configuration
    let directory: any SubscriberDirectory
    let faults: TwilioFaults
    private let verifications = Mutex<[String: Verification]>([:])

    public init(configuration: Configuration, directory: any SubscriberDirectory, faults: TwilioFaults = TwilioFaults())
    {
        self.configuration = configuration
        self.directory = directory
        self.faults = faults
    }

    /// The 605xx code Twilio records for a negative SNA `ErrorCode`.
    static func attemptErrorCode(of snaErrorCode: Int) -> Int {
        switch snaErrorCode {
        case -33: 60533
        case -34: 60534
        case -40: 60540
        default: 60510
        }
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        if parts.count == 3, parts[0] == "v2", parts[1] == "sna", request.method == "GET" || request.method == "POST" {
            return openSNAURL(sid: parts[2], from: request.remoteAddress)
        }
        guard parts.count == 4, parts[0] == "v2", parts[1] == "Services" else {
            return Self.error(404, 20404, "The requested resource \(request.path) was not found")
        }
        guard request.method == "POST" else { return Self.error(405, 20004, "Method not allowed") }
        guard let (user, password) = WebEncoding.basicCredentials(request.headers["Authorization"]),
            user == configuration.accountSID, password == configuration.authToken
        else {
            return Self.error(401, 20003, "Authenticate")
        }
        guard parts[2] == configuration.serviceSID else {
            return Self.error(404, 20404, "The requested resource \(request.path) was not found")
        }
        guard let form = WebEncoding.formFields(request.body) else {
            return Self.error(400, 20001, "The body must be application/x-www-form-urlencoded")
        }
        switch parts[3] {
        case "Verifications": return create(form)
        case "VerificationCheck": return check(form, path: request.path)
        default: return Self.error(404, 20404, "The requested resource \(request.path) was not found")
        }
    }

    /// `POST /v2/Services/{VA}/Verifications`: `To` in E.164, `Channel=sna`.
    private func create(_ form: [String: String]) -> HTTPResponse {
        guard form["To"]?.hasPrefix("+") == true, let to = form["To"].flatMap(PhoneNumberFormat.e164) else {
            return Self.error(400, 60200, "Invalid parameter: To")
        }
        guard form["Channel"] == "sna" else { return Self.error(400, 60200, "Invalid parameter: Channel") }
        if faults.rateLimited { return Self.error(429, 60203, "Max send attempts reached") }
        let sid = "VE" + RandomBytes.hex(16)
        let refused = verifications.withLock { all -> Bool in
            guard all.values.filter({ $0.to == to && $0.status == "pending" }).count < configuration.maxPendingPerNumber
            else { return true }
            all[sid] = Verification(sid: sid, to: to)
            return false
        }
        if refused { return Self.error(429, 60203, "Max send attempts reached") }
        return .json(
            201,
            .object([
                ("sid", .string(sid)), ("service_sid", .string(configuration.serviceSID)),
                ("account_sid", .string(configuration.accountSID)), ("to", .string(to)), ("channel", .string("sna")),
                ("status", .string("pending")), ("valid", .bool(false)),
                ("sna", .object([("url", .string(configuration.baseURL + "/v2/sna/" + sid))]))
            ]))
    }

    /// The SNA URL, opened by the device: once; the subscriber holding the source address is
    /// compared with the verification's number (0, or 60500 recorded), an address no bearer
    /// holds is not a mobile connection (-31, 60510).
    private func openSNAURL(sid: String, from address: String) -> HTTPResponse {
        let subscriber = directory.subscriber(holding: address)
        let carrier = directory.network(holding: address).map { $0.mcc + $0.mnc } ?? ""
        let answer = verifications.withLock { all -> (Int, String)? in
            guard var verification = all[sid] else { return nil }
            defer { all[sid] = verification }
            guard !verification.snaOpened else { return (-10, "SNA URL already used") }
            verification.snaOpened = true
            guard let subscriber else {
                verification.errorCodes.append(60510)
                return (-31, "Unsupported connection (not a mobile network)")
            }
            if let code = faults.snaErrorCode {
                verification.errorCodes.append(Self.attemptErrorCode(of: code))
                return (code, "The scenario's SNA error")
            }
            if let code = faults.attemptErrorCode {
                verification.errorCodes.append(code)
            } else if subscriber.msisdn == verification.to {
                verification.status = "approved"
            } else {
                verification.errorCodes.append(60500)
            }
            return (0, "Success")
        }
        guard let (code, description) = answer else {
            return Self.text("ErrorCode=-10&ErrorDescription=Unknown+SNA+URL&Carrier=")
        }
        return Self.text(
            "ErrorCode=\(code)&ErrorDescription=\(WebEncoding.percentEncode(description))&Carrier=\(carrier)")
    }

    /// `POST /v2/Services/{VA}/VerificationCheck` with `VerificationSid` (or `To`): the status
    /// and the SNA attempts' error codes; an approved verification is done with (404 after).
    private func check(_ form: [String: String], path: String) -> HTTPResponse {
        let to = form["To"].flatMap(PhoneNumberFormat.e164)
        let found = verifications.withLock { all -> Verification? in
            guard var match = form["VerificationSid"].flatMap({ all[$0] }) ?? all.values.first(where: { $0.to == to }),
                match.status != "consumed"
            else { return nil }
            if faults.expired { match.status = "expired" }
            if match.status == "approved" { all[match.sid]?.status = "consumed" }
            return match
        }
        guard let found else { return Self.error(404, 20404, "The requested resource \(path) was not found") }
        let attempts = found.errorCodes.map { code in
            JSONValue.object([("attempt_sid", .string("VL" + found.sid.dropFirst(2))), ("code", .int(code))])
        }
        return .json(
            200,
            .object([
                ("sid", .string(found.sid)), ("service_sid", .string(configuration.serviceSID)),
                ("to", .string(found.to)), ("channel", .string("sna")), ("status", .string(found.status)),
                ("valid", .bool(found.status == "approved")), ("sna_attempts_error_codes", .array(attempts))
            ]))
    }

    private static func text(_ body: String) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "text/plain", body: body)
    }

    /// Twilio's error body: `{code, message, more_info, status}`.
    static func error(_ status: Int, _ code: Int, _ message: String) -> HTTPResponse {
        .json(
            status,
            .object([
                ("code", .int(code)), ("message", .string(message)),
                ("more_info", .string("https://www.twilio.com/docs/errors/\(code)")), ("status", .int(status))
            ]))
    }
}
