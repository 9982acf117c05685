import CellpathCore

/// The server side of a check, as the workflow engine needs it: a development server that
/// speaks the tru.ID dev-server contract (`cellpath serve`, or tru.ID's own), or the tru.ID API
/// itself. Its calls go over the default network, never through the cellular path.
public protocol CheckBackend: Sendable {
    /// What the reports call it: `server http://…` or `tru.ID API https://…`.
    var name: String { get }
    /// Creates a PhoneCheck or SubscriberCheck for `phoneNumber` (E.164).
    func create(
        _ product: CheckProduct, phoneNumber: String, options: CheckOptions
    ) async throws(CellpathError) -> CreatedCheckHandle
    /// Completes a check after its check_url was opened: exchanges the v0.2 `code` of
    /// `callback`, or reads the v0.1 result.
    func complete(
        _ product: CheckProduct, check: CreatedCheckHandle, callback: CheckCallback?
    ) async throws(CellpathError) -> CheckVerdict
    /// Runs a SIMCheck (synchronous: no device leg).
    func simCheck(phoneNumber: String, options: CheckOptions) async throws(CellpathError) -> CheckVerdict
    /// A token with the coverage scope and the URL the device asks with it (`device_ip`).
    func coverageAccess() async throws(CellpathError) -> CoverageAccess
}

/// Options of a check that the backend passes on.
public struct CheckOptions: Sendable, Equatable {
    /// v0.1 (the result is read after the chain) or v0.2 (the chain ends with a code to exchange).
    public var apiVersion: APIVersion
    /// The app's own URL the chain ends at (v0.2), with `check_id` and `code` in its query.
    public var redirectURL: String?
    /// An id of the caller's, echoed in the callback and the result.
    public var referenceID: String?

    public init(apiVersion: APIVersion = .v0_2, redirectURL: String? = nil, referenceID: String? = nil) {
        self.apiVersion = apiVersion
        self.redirectURL = redirectURL
        self.referenceID = referenceID
    }
}

/// A check the backend created: what the device needs to open it.
public struct CreatedCheckHandle: Sendable, Equatable {
    public var checkID: String
    public var checkURL: String
    /// Seconds the check stays open (tru.ID: 120); nil when the backend does not say.
    public var ttl: Int?

    public init(checkID: String, checkURL: String, ttl: Int? = nil) {
        self.checkID = checkID
        self.checkURL = checkURL
        self.ttl = ttl
    }
}

/// What a completed check says.
public struct CheckVerdict: Sendable, Equatable, Codable {
    public var checkID: String?
    /// The check's status when the backend reports it (`COMPLETED`, `EXPIRED`, `ERROR`, …).
    public var status: String?
    /// Whether the number is the SIM's (PhoneCheck, SubscriberCheck).
    public var match: Bool?
    /// False when the SIM changed within the period (SubscriberCheck, SIMCheck).
    public var noSimChange: Bool?
    /// tru.ID's bucket (minutes) of the time since the last SIM change.
    public var simChangeWithin: Int?
    public var lastSimChangeAt: String?
    /// The API's error code of a check in ERROR (e.g. `mno_user_not_found`).
    public var errorCode: String?
    /// The device's number as the operator told it, when it was asked for it instead of
    /// verifying a number (CAMARA's `device-phone-number`).
    public var devicePhoneNumber: String?

    public init(
        checkID: String? = nil, status: String? = nil, match: Bool? = nil, noSimChange: Bool? = nil,
        simChangeWithin: Int? = nil, lastSimChangeAt: String? = nil, errorCode: String? = nil
    ) {
        self.checkID = checkID
        self.status = status
        self.match = match
        self.noSimChange = noSimChange
        self.simChangeWithin = simChangeWithin
        self.lastSimChangeAt = lastSimChangeAt
        self.errorCode = errorCode
    }

    /// Reads the fields that the API and the development server share (`check_id`, `status`,
    /// `match`, `no_sim_change`, `sim_change_within`, `last_sim_change_at`, `error_code`).
    public init(json: JSONValue) {
        self.init(
            checkID: json[string: "check_id"], status: json[string: "status"], match: json["match"]?.boolValue,
            noSimChange: json["no_sim_change"]?.boolValue, simChangeWithin: json["sim_change_within"]?.intValue,
            lastSimChangeAt: json[string: "last_sim_change_at"], errorCode: json[string: "error_code"])
    }
}

/// How the device asks for coverage: the token and the `device_ip` URL.
public struct CoverageAccess: Sendable, Equatable {
    public var token: String
    public var url: String

    public init(token: String, url: String) {
        self.token = token
        self.url = url
    }
}
