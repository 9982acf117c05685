import CellpathCore

/// The v0.2 callback a check_url chain ends with: `{check_id, code, reference_id}` or
/// `{check_id, error, error_description}`.
public struct CheckCallback: Sendable, Equatable, Codable {
    public var checkID: String
    public var code: String?
    public var referenceID: String?
    public var error: String?
    public var errorDescription: String?

    public init(checkID: String, code: String? = nil, referenceID: String? = nil, error: String? = nil,
                errorDescription: String? = nil) {
        self.checkID = checkID
        self.code = code
        self.referenceID = referenceID
        self.error = error
        self.errorDescription = errorDescription
    }

    /// Recognises the callback in a final response body: an object with `check_id` and a
    /// `code` or an `error`. Nil for anything else.
    public init?(recognizing json: JSONValue?) {
        guard let json, let checkID = json[string: "check_id"], json[string: "code"] != nil || json[string: "error"] != nil else {
            return nil
        }
        self.init(checkID: checkID, code: json[string: "code"], referenceID: json[string: "reference_id"],
                  error: json[string: "error"], errorDescription: json[string: "error_description"])
    }
}
