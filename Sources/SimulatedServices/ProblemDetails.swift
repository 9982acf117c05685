import CellpathCore
import HTTPServer
import SimulatorScenario

/// RFC 7807 `application/problem+json` responses with the tru.ID API's problem types.
enum ProblemDetails {
    /// The documented type URI for a tru.ID error key (e.g. `not_mobile_ip`).
    static func typeURI(_ key: String) -> String { "https://developer.tru.id/docs/reference/api-errors#\(key)" }

    /// A problem response: `status`, the error `key` (the type's fragment), title, detail and
    /// `extra` members (RFC 7807 extension members).
    static func response(
        _ status: Int, _ key: String, _ title: String, _ detail: String,
        headers: HTTPHeaders = [:], extra: [(String, JSONValue)] = []
    ) -> HTTPResponse {
        let body = JSONValue.object(
            [
                ("type", .string(typeURI(key))), ("title", .string(title)),
                ("detail", .string(detail))
            ] + extra)
        return HTTPResponse(
            status: status, contentType: "application/problem+json", body: body.serialized, headers: headers)
    }

    static func badRequest(_ detail: String) -> HTTPResponse {
        response(400, "bad_request", "Bad Request", detail)
    }

    static func checkNotFound() -> HTTPResponse {
        response(404, "check_not_found", "Not Found", "Check Not Found")
    }

    /// check_url's refusal of the device's operator (a scenario fault).
    static func checkURLError(_ error: CheckURLError) -> HTTPResponse {
        switch error {
        case .mnoNotSupported:
            response(400, "mno_not_supported", "Bad Request", "Mobile Network Operator Not Supported")
        case .mnoRedirectUnsupported:
            response(
                501, "mno_redirect_unsupported", "Not Implemented", "Mobile Network Operator Not Supporting Redirect")
        }
    }

    static func notMobileIP() -> HTTPResponse {
        response(412, "not_mobile_ip", "Precondition Failed", "Not a mobile IP")
    }

    static func notFound(_ path: String) -> HTTPResponse {
        response(404, "not_found", "Not Found", "No resource at \(path)")
    }

    static func methodNotAllowed(_ allowed: [String]) -> HTTPResponse {
        response(
            405, "method_not_allowed", "Method Not Allowed", "Allowed: \(allowed.joined(separator: ", "))",
            headers: ["Allow": allowed.joined(separator: ", ")])
    }
}

extension HTTPResponse {
    /// A JSON response with the given content type (`application/json` unless HAL).
    static func json(
        _ status: Int, _ value: JSONValue, contentType: String = "application/json",
        headers: HTTPHeaders = [:]
    ) -> HTTPResponse {
        HTTPResponse(status: status, contentType: contentType, body: value.serialized, headers: headers)
    }
}

extension CheckURLError {
    /// The check's `error_code` after check_url refused the device's operator.
    var errorCode: String {
        switch self {
        case .mnoNotSupported: "mno_not_supported"
        case .mnoRedirectUnsupported: "mno_redirect_unsupported"
        }
    }
}
