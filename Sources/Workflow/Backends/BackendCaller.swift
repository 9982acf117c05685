import CellpathCore
import CellularHTTP

/// One JSON call to a backend over the default network, retried on what is transient (a
/// timeout, a reset connection, 429, 5xx) with the policy's backoff, and its failure named as
/// `couldn't <operation>: <reason>` with the exit code of its kind.
struct BackendCaller: Sendable {
    let http: any TruAPITransport
    let caFile: String?
    let timeout: Duration
    let retry: RetryPolicy
    /// The backend's own error text in an error answer's body, if any.
    let errorDescription: @Sendable (JSONValue?) -> String?
    /// The backend's own meaning of an error answer (a provider's 404 or 409), before the
    /// generic one; nil leaves it to the generic mapping.
    var namedError: (@Sendable (_ status: Int, _ body: JSONValue?, _ operation: String) -> CellpathError?)? = nil

    /// Sends `json` (if any) with `method` to `url` and returns the JSON object answered.
    func call(
        _ method: String, url: String, json: JSONValue?, headers: [HTTPHeader] = [],
        operation: String
    ) async throws(CellpathError) -> JSONValue {
        var request = HTTPClientRequest(
            url: url, method: method, headers: headers + [HTTPHeader("Accept", "application/json")],
            timeout: timeout, caFile: caFile)
        if let json {
            request.body = Array(json.serialized.utf8)
            request.headers.append(HTTPHeader("Content-Type", "application/json"))
        }
        return try await perform(request, operation: operation)
    }

    /// Sends `form` (`application/x-www-form-urlencoded`) with `method` to `url` and returns the
    /// JSON object answered.
    func call(
        _ method: String, url: String, form: [(String, String)], headers: [HTTPHeader] = [],
        operation: String
    ) async throws(CellpathError) -> JSONValue {
        let request = HTTPClientRequest(
            url: url, method: method,
            headers: headers + [
                HTTPHeader("Accept", "application/json"),
                HTTPHeader("Content-Type", "application/x-www-form-urlencoded")
            ],
            body: Array(FormEncoding.encode(form).utf8), timeout: timeout, caFile: caFile)
        return try await perform(request, operation: operation)
    }

    /// Sends `request`, retried by the policy, and returns the JSON object answered.
    private func perform(_ request: HTTPClientRequest, operation: String) async throws(CellpathError) -> JSONValue {
        var attempt = 0
        while true {
            attempt += 1
            let failure: TruAPIError
            switch await send(request) {
            case .success(let response) where (200 ..< 300).contains(response.status):
                guard let answer = response.json, case .object = answer else {
                    throw CellpathError(
                        .protocolError,
                        "couldn't \(operation): the server's answer (\(response.status)) is not a JSON object")
                }
                return answer
            case .success(let response):
                failure = .upstream(UpstreamAnswer(response))
            case .failure(let error):
                if error.reason == .cancelled { throw CellpathError(.cancelled, "cancelled") }
                failure = .transport(error)
            }
            guard let delay = retry.delay(after: failure, attempt: attempt), !Task.isCancelled else {
                throw cellpathError(failure, operation: operation)
            }
            do { try await Task.sleep(for: delay) } catch { throw CellpathError(.cancelled, "cancelled") }
        }
    }

    private func send(_ request: HTTPClientRequest) async -> Result<HTTPClientResponse, FetchFailure> {
        do throws(FetchFailure) { return .success(try await http.send(request)) } catch { return .failure(error) }
    }

    /// The failure as `couldn't <operation>: <reason>`, with the backend's own error text.
    private func cellpathError(_ failure: TruAPIError, operation: String) -> CellpathError {
        guard case .upstream(let answer) = failure else {
            var error = failure.cellpathError
            error.message = "couldn't \(operation): \(error.message)"
            return error
        }
        let status = answer.status
        if let named = namedError?(status, JSONValue.parse(answer.body), operation) { return named }
        let said =
            errorDescription(JSONValue.parse(answer.body)).map { ": \(String($0.prefix(300)).terminalSafe)" } ?? ""
        switch status {
        case 401, 403:
            return CellpathError(
                .configuration, "couldn't \(operation): the server refused the request (\(status))\(said)",
                hint: "check the server's API key, or its tru.ID credentials")
        case 429:
            return CellpathError(
                .temporary, "couldn't \(operation): too many requests (429)\(said)",
                hint: answer.header("retry-after").map { "retry after \($0) s (the server's Retry-After)" }
                    ?? "retry later")
        case 500 ..< 600:
            return CellpathError(
                .temporary, "couldn't \(operation): the server failed (\(status))\(said)", hint: "retry later")
        default:
            return CellpathError(.dataError, "couldn't \(operation): the server answered \(status)\(said)")
        }
    }
}
