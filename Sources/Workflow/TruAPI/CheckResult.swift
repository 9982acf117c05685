import CellpathCore

/// The lifecycle state of a check.
public enum CheckStatus: Sendable, Equatable {
    case accepted, pending, completed, expired, error
    /// A state this client does not know, as the API spelt it.
    case other(String)

    public init(_ text: String) {
        switch text {
        case "ACCEPTED": self = .accepted
        case "PENDING": self = .pending
        case "COMPLETED": self = .completed
        case "EXPIRED": self = .expired
        case "ERROR": self = .error
        default: self = .other(text)
        }
    }

    /// The API's spelling.
    public var text: String {
        switch self {
        case .accepted: "ACCEPTED"
        case .pending: "PENDING"
        case .completed: "COMPLETED"
        case .expired: "EXPIRED"
        case .error: "ERROR"
        case .other(let text): text
        }
    }
}

/// A check the API just created: what the device must open, and for how long.
public struct CreatedCheck: Sendable, Equatable {
    public var checkID: String
    public var checkURL: String
    public var status: CheckStatus
    /// Seconds the check stays open.
    public var ttl: Int?
    public var createdAt: String?
    /// The API's whole answer.
    public var json: JSONValue

    /// Reads a creation answer; nil when it lacks `check_id` or `_links.check_url.href`.
    init?(json: JSONValue) {
        guard let checkID = json[string: "check_id"], let checkURL = json["_links"]?["check_url"]?[string: "href"]
        else { return nil }
        self.checkID = checkID
        self.checkURL = checkURL
        status = CheckStatus(json[string: "status"] ?? "")
        ttl = json["ttl"]?.intValue
        createdAt = json[string: "created_at"]
        self.json = json
    }
}

/// The state or outcome of a check (all products: fields a product does not report are nil).
public struct CheckResult: Sendable, Equatable {
    public var checkID: String
    public var status: CheckStatus
    public var match: Bool?
    public var noSimChange: Bool?
    /// The window in which a SIM change was looked for, as the API reports it.
    public var simChangeWithin: Int?
    public var lastSimChangeAt: String?
    /// The API's error code of a check in state ERROR (e.g. `mno_redirect_unsupported`).
    public var errorCode: String?
    /// The API's whole answer.
    public var json: JSONValue

    /// Reads a check resource; nil when it lacks `check_id` or `status`.
    init?(json: JSONValue) {
        guard let checkID = json[string: "check_id"], let status = json[string: "status"] else { return nil }
        self.checkID = checkID
        self.status = CheckStatus(status)
        match = json["match"]?.boolValue
        noSimChange = json["no_sim_change"]?.boolValue
        simChangeWithin = json["sim_change_within"]?.intValue
        lastSimChangeAt = json[string: "last_sim_change_at"]
        errorCode = json[string: "error_code"]
        self.json = json
    }
}

/// A successful answer passed on as it came: its status and JSON body (coverage).
public struct APIAnswer: Sendable, Equatable {
    public var status: Int
    public var json: JSONValue
}
