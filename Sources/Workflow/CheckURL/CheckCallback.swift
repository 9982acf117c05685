import CellpathCore
import CellularHTTP

/// The v0.2 callback a check_url chain ends with: `{check_id, code, reference_id}` or
/// `{check_id, error, error_description}`, as the final body or as the query of the redirect to
/// the check's `redirect_url`.
public struct CheckCallback: Sendable, Equatable, Codable {
    public var checkID: String
    public var code: String?
    public var referenceID: String?
    public var error: String?
    public var errorDescription: String?

    public init(
        checkID: String, code: String? = nil, referenceID: String? = nil, error: String? = nil,
        errorDescription: String? = nil
    ) {
        self.checkID = checkID
        self.code = code
        self.referenceID = referenceID
        self.error = error
        self.errorDescription = errorDescription
    }

    /// Recognises the callback in a final response body: an object with `check_id` and a
    /// `code` or an `error`. Nil for anything else. A body with `request_id` instead (Vonage's
    /// silent_auth ending, whose request a development server over Vonage answers as the
    /// check's `check_id`) names the check by it.
    public init?(recognizing json: JSONValue?) {
        guard let json, let checkID = json[string: "check_id"] ?? json[string: "request_id"],
            json[string: "code"] != nil || json[string: "error"] != nil
        else {
            return nil
        }
        self.init(
            checkID: checkID, code: json[string: "code"], referenceID: json[string: "reference_id"],
            error: json[string: "error"], errorDescription: json[string: "error_description"])
    }

    /// Recognises the callback in a redirect target (the check's `redirect_url`, the app's own
    /// URL): a query with `check_id` and a `code` or an `error`, percent-decoded. Nil otherwise.
    public init?(redirectURL url: String) {
        let items = Credentials.queryItems(of: url)
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard let checkID = value("check_id"), !checkID.isEmpty, value("code") != nil || value("error") != nil else {
            return nil
        }
        self.init(
            checkID: checkID, code: value("code"), referenceID: value("reference_id"), error: value("error"),
            errorDescription: value("error_description"))
    }
}
