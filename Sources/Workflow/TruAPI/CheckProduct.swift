/// A tru.ID product with checks, by its URL path segment and token scope.
public enum CheckProduct: String, Sendable, CaseIterable {
    case phoneCheck = "phone_check"
    case subscriberCheck = "subscriber_check"
    case simCheck = "sim_check"

    /// The access-token scope the product's calls need.
    public var scope: String { rawValue }
}

/// A version of a product's REST API: v0.1 completes at the last check_url hop, v0.2 with a code.
public enum APIVersion: String, Sendable {
    case v0_1 = "v0.1"
    case v0_2 = "v0.2"
}

/// Where the tru.ID API is and the project credentials that call it.
public struct TruAPIEndpoint: Sendable {
    /// Scheme and host, e.g. `https://eu.api.tru.id` (a trailing slash is ignored).
    public var baseURL: String
    public var clientID: String
    public var clientSecret: String
    /// Extra CA bundle (PEM) trusted for the API besides the system store.
    public var caFile: String?

    public init(baseURL: String, clientID: String, clientSecret: String, caFile: String? = nil) {
        self.baseURL = baseURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.caFile = caFile
    }

    /// The base URL without trailing slashes.
    var trimmedBaseURL: String {
        var base = Substring(baseURL)
        while base.hasSuffix("/") { base = base.dropLast() }
        return String(base)
    }
}
