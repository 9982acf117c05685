import CellpathCore
import HTTPServer
import SystemSupport

extension FakeTruAPI {
    /// `POST /{product}/{version}/checks`: validates the payload and stores the check;
    /// SIMCheck is answered at once from the subscriber directory.
    func createCheck(_ kind: CheckKind, _ request: HTTPRequest, client: String) -> HTTPResponse {
        if let retryAfter = configuration.faults.rateLimitRetryAfter, faultStrikes(\.rateLimitCandidates) {
            return ProblemDetails.response(
                429, "too_many_requests", "Rate Limit exceeded",
                "Too many checks (scenario fault)", headers: ["Retry-After": String(retryAfter)])
        }
        guard request.headers["Content-Type"]?.lowercased().hasPrefix("application/json") == true else {
            return ProblemDetails.response(
                415, "unsupported_media_type", "Unsupported Media Type",
                "The body must be application/json")
        }
        guard let payload = JSONValue.parse(request.body), case .object = payload else {
            return ProblemDetails.badRequest("The request body is invalid")
        }
        guard let number = payload["phone_number"]?.stringValue.flatMap(PhoneNumberFormat.e164) else {
            return ProblemDetails.response(400, "phone_format_invalid", "Bad Request", "Phone Number Validation Error")
        }
        var referenceID: String?
        if let value = payload["reference_id"], !value.isNull {
            guard let text = value.stringValue else {
                return ProblemDetails.badRequest("reference_id must be a string")
            }
            referenceID = text
        }
        var redirectURL: String?
        if kind.hasCodeFlow, let value = payload["redirect_url"], !value.isNull {
            guard let url = value.stringValue, url.hasPrefix("https://") || url.hasPrefix("http://"),
                !url.contains(where: { $0 == "\r" || $0 == "\n" || $0 == " " })
            else {
                return ProblemDetails.badRequest("redirect_url must be an absolute http(s) URL")
            }
            redirectURL = url
        }
        var period = SimChangeWindow.defaultPeriod
        if kind.product.reportsSimChange, let value = payload["period"], !value.isNull {
            guard let minutes = value.intValue, SimChangeWindow.periodRange.contains(minutes) else {
                return ProblemDetails.badRequest("period must be an integer between 60 and 540000 (minutes)")
            }
            period = minutes
        }
        let now = clock.now()
        var record = CheckRecord(
            id: UUIDv4.random(), kind: kind, clientID: client, phoneNumber: number,
            referenceID: referenceID, redirectURL: redirectURL, period: period,
            createdAt: now, updatedAt: now, status: .accepted)
        if kind.product == .simCheck {
            if configuration.faults.sandbox {
                let outcome = SandboxOutcome(phoneNumber: number)
                record.status = outcome == .error ? .error : .completed
                record.errorCode = outcome == .error ? SandboxOutcome.errorCode : nil
                record.simChange = outcome.simChange(period: period)
            } else if let sim = directory.subscriber(msisdn: number) {
                record.status = .completed
                record.simChange = SimChangeWindow(minutesAgo: sim.simChangedMinutesAgo, period: period)
            } else {
                record.status = .error
                record.errorCode = "mno_user_not_found"
            }
        }
        let stored = record
        state.withLock { $0.checks.store(stored) }
        var body = render(record, creation: true)
        if configuration.faults.malformedJSON {
            let text = Array(body.serialized.utf8)
            return HTTPResponse(
                status: 201, headers: ["Content-Type": "application/hal+json"],
                body: Array(text.prefix(text.count / 2)))
        }
        if kind.product == .simCheck, case .object(var members) = body {
            members.removeAll { $0.0 == "ttl" }
            body = .object(members)
        }
        return .json(
            201, body, contentType: "application/hal+json",
            headers: ["Location": selfURL(record)])
    }

    /// `GET /{product}/{version}/checks/{id}`.
    func getCheck(_ kind: CheckKind, id: String, client: String) -> HTTPResponse {
        guard let record = refreshedCheck(id, kind: kind, client: client) else { return ProblemDetails.checkNotFound() }
        return .json(200, render(record, creation: false), contentType: "application/hal+json")
    }

    /// `PATCH /{product}/v0.2/checks/{id}` with `[{"op":"add","path":"/code","value":CODE}]`:
    /// exchanges the code issued at the last hop (once) and completes the check.
    func patchCheck(_ kind: CheckKind, id: String, _ request: HTTPRequest, client: String) -> HTTPResponse {
        guard request.headers["Content-Type"]?.lowercased().hasPrefix("application/json-patch+json") == true else {
            return ProblemDetails.response(
                415, "unsupported_media_type", "Unsupported Media Type",
                "The body must be application/json-patch+json")
        }
        guard let patch = JSONValue.parse(request.body)?.arrayValue, patch.count == 1,
            patch[0]["op"]?.stringValue == "add", patch[0]["path"]?.stringValue == "/code",
            let code = patch[0]["value"]?.stringValue
        else {
            return ProblemDetails.badRequest("Expected [{\"op\":\"add\",\"path\":\"/code\",\"value\":CODE}]")
        }
        guard refreshedCheck(id, kind: kind, client: client) != nil else { return ProblemDetails.checkNotFound() }
        let now = clock.now()
        let (response, completed) = state.withLock { state -> (HTTPResponse, CheckRecord?) in
            guard var record = state.checks[id] else { return (ProblemDetails.checkNotFound(), nil) }
            switch record.status {
            case .expired, .error:
                return (.json(200, render(record, creation: false), contentType: "application/hal+json"), nil)
            case .completed: return (ProblemDetails.badRequest("Code already used"), nil)
            case .accepted:
                return (
                    ProblemDetails.response(404, "check_not_found", "Not Found", "check_url has not been opened yet"),
                    nil
                )
            case .pending: break
            }
            guard let issued = record.code else {
                return (ProblemDetails.badRequest("No code has been issued for this check yet"), nil)
            }
            guard issued == code else { return (ProblemDetails.badRequest("Invalid code"), nil) }
            record.status = .completed
            record.updatedAt = now
            state.checks.store(record)
            return (.json(200, render(record, creation: false), contentType: "application/hal+json"), record)
        }
        announceEnd(of: completed)
        return response
    }

    /// `GET …/checks/{id}/redirect` (the `check_url`, opened by the device): marks the check
    /// PENDING and sends the device to the carrier; 412 `not_mobile_ip` from a non-mobile address;
    /// 400 `mno_not_supported` or 501 `mno_redirect_unsupported` when the scenario refuses the
    /// device's operator (the check is then ERROR with that error code).
    func openCheckURL(_ kind: CheckKind, id: String, _ request: HTTPRequest) -> HTTPResponse {
        guard let record = refreshedCheck(id, kind: kind, client: nil) else { return ProblemDetails.checkNotFound() }
        if record.status == .expired {
            return ProblemDetails.response(410, "check_expired", "Gone", "Check has expired")
        }
        guard record.status.isOpen, record.code == nil else {
            return ProblemDetails.response(409, "check_processed", "Conflict", "Check has already been processed")
        }
        let now = clock.now()
        guard let network = directory.network(holding: request.remoteAddress) else {
            announceEnd(
                of: update(id) {
                    $0.status = .error
                    $0.errorCode = "not_mobile_ip"
                    $0.updatedAt = now
                })
            return ProblemDetails.notMobileIP()
        }
        if let refusal = network.checkURLError
            ?? configuration.faults.checkURLErrors.first(where: { $0.operator == network.operatorID })?.error
        {
            announceEnd(
                of: update(id) {
                    $0.status = .error
                    $0.errorCode = refusal.errorCode
                    $0.updatedAt = now
                })
            return ProblemDetails.checkURLError(refusal)
        }
        update(id) {
            $0.status = .pending
            $0.updatedAt = now
        }
        let back = configuration.baseURL + kind.pathPrefix + "/\(id)/callback"
        return .redirect(WebEncoding.appending([("return", back)], to: configuration.carrierURL + "/v1/identify/\(id)"))
    }

    /// `GET …/checks/{id}/callback?assertion=…` (or `?error=…`): the device's last hop, back
    /// from the carrier. v0.2 answers `{check_id, code, reference_id}` (or redirects to
    /// `redirect_url`); v0.1 completes the check.
    func carrierReturn(_ kind: CheckKind, id: String, _ request: HTTPRequest) -> HTTPResponse {
        guard let record = refreshedCheck(id, kind: kind, client: nil) else { return ProblemDetails.checkNotFound() }
        if record.status == .expired { return lastHopError(record, "check_expired", "The check has expired") }
        guard record.status == .pending, record.code == nil else {
            return ProblemDetails.response(409, "check_processed", "Conflict", "Check has already been processed")
        }
        let now = clock.now()
        let fail = { (code: String, description: String) -> HTTPResponse in
            self.announceEnd(
                of: self.update(id) {
                    $0.status = .error
                    $0.errorCode = code
                    $0.updatedAt = now
                })
            return self.lastHopError(record, code, description)
        }
        if let error = request.query("error") { return fail(error, "The mobile network operator reported an error") }
        guard let assertion = request.query("assertion").flatMap(ledger.redeem) else {
            return fail("mno_response_error", "The mobile network operator's response is missing or invalid")
        }
        let sandbox = configuration.faults.sandbox ? SandboxOutcome(phoneNumber: record.phoneNumber) : nil
        if sandbox == .error {
            return fail(SandboxOutcome.errorCode, "The mobile network operator reported an error (sandbox)")
        }
        let code = kind.hasCodeFlow ? RandomBytes.hex(16) : nil
        let updated = update(id) {
            if let sandbox {
                $0.match = sandbox == .success
                $0.simChange = sandbox.simChange(period: $0.period)
            } else {
                $0.match = PhoneNumberFormat.e164(assertion.sim.msisdn) == $0.phoneNumber
                $0.simChange = SimChangeWindow(minutesAgo: assertion.sim.simChangedMinutesAgo, period: $0.period)
            }
            $0.networkID = assertion.network.map { $0.mcc + $0.mnc }
            $0.code = code
            if code == nil { $0.status = .completed }
            $0.updatedAt = now
        }
        guard let code else {
            announceEnd(of: updated)
            return .json(200, .object([("check_id", .string(id)), ("status", .string(CheckStatus.completed.rawValue))]))
        }
        var fields: [(String, String)] = [("check_id", id), ("code", code)]
        if let reference = updated?.referenceID { fields.append(("reference_id", reference)) }
        if let redirect = record.redirectURL { return .redirect(WebEncoding.appending(fields, to: redirect)) }
        return .json(200, .object(fields.map { ($0.0, .string($0.1)) }))
    }

    /// The last hop's error answer: `{check_id, error, error_description}`, or a redirect to
    /// `redirect_url` carrying them.
    private func lastHopError(_ record: CheckRecord, _ error: String, _ description: String) -> HTTPResponse {
        let fields = [("check_id", record.id), ("error", error), ("error_description", description)]
        if let redirect = record.redirectURL { return .redirect(WebEncoding.appending(fields, to: redirect)) }
        return .json(200, .object(fields.map { ($0.0, .string($0.1)) }))
    }

    /// The check `id` of `kind` (owned by `client` when given), moved to EXPIRED when its
    /// TTL has passed while open.
    func refreshedCheck(_ id: String, kind: CheckKind, client: String?) -> CheckRecord? {
        let now = clock.now()
        let ttl = Double(configuration.checkTTL)
        let (record, expiredNow) = state.withLock { state -> (CheckRecord?, Bool) in
            guard var record = state.checks[id], record.kind == kind,
                client == nil || record.clientID == client
            else { return (nil, false) }
            guard record.status.isOpen && now - record.createdAt >= ttl else { return (record, false) }
            record.status = .expired
            record.updatedAt = record.createdAt + ttl
            state.checks.store(record)
            return (record, true)
        }
        if expiredNow { announceEnd(of: record) }
        return record
    }

    @discardableResult
    private func update(_ id: String, _ change: (inout CheckRecord) -> Void) -> CheckRecord? {
        state.withLock { state -> CheckRecord? in
            guard var record = state.checks[id] else { return nil }
            change(&record)
            state.checks.store(record)
            return record
        }
    }

    private func selfURL(_ record: CheckRecord) -> String {
        configuration.baseURL + record.kind.pathPrefix + "/\(record.id)"
    }

    /// The check resource as JSON (HAL links included); `match`, `network_id` and SIM-change
    /// fields only once COMPLETED, `error_code` only on ERROR.
    func render(_ record: CheckRecord, creation: Bool) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("check_id", .string(record.id)), ("status", .string(record.status.rawValue))
        ]
        if record.status == .completed, let match = record.match, record.kind.product != .simCheck {
            members.append(("match", .bool(match)))
        }
        if record.status == .error, let code = record.errorCode { members.append(("error_code", .string(code))) }
        if let reference = record.referenceID { members.append(("reference_id", .string(reference))) }
        members += [
            ("charge_amount", .int(1)), ("charge_currency", .string("API")),
            ("created_at", .string(SimulatorClock.timestamp(record.createdAt)))
        ]
        if !creation { members.append(("updated_at", .string(SimulatorClock.timestamp(record.updatedAt)))) }
        if record.status == .completed {
            if let network = record.networkID { members.append(("network_id", .string(network))) }
            if record.kind.product.reportsSimChange, let change = record.simChange {
                members.append(("no_sim_change", .bool(change.noSimChange)))
                if let within = change.simChangeWithin { members.append(("sim_change_within", .int(within))) }
                members.append(("no_sim_change_period", .int(record.period)))
            }
        }
        members.append(("ttl", .int(configuration.checkTTL)))
        var links: [(String, JSONValue)] = [("self", .object([("href", .string(selfURL(record)))]))]
        if record.kind.product != .simCheck && record.status.isOpen && record.code == nil {
            links.append(("check_url", .object([("href", .string(selfURL(record) + "/redirect"))])))
        }
        members.append(("_links", .object(links)))
        return .object(members)
    }
}
