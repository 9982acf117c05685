import CellpathCore

/// One HTTP header as sent or received.
public struct HTTPHeader: Sendable, Equatable, Codable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Which address family the chain may use on the cellular path.
public enum IPType: String, Sendable, Codable, CaseIterable {
    case ipv4, ipv6, any
}

/// What to fetch through the cellular path, and the rules for its redirect chain.
public struct FetchRequest: Sendable {
    /// Absolute http or https URL of the first hop (e.g. a `check_url`).
    public var url: String
    /// Method of the first hop; redirects change it by the 301/302/303/307/308 rules.
    public var method: String
    /// Extra request headers, sent on every hop except Authorization, Proxy-Authorization and
    /// Cookie once the chain leaves the first origin (validated: token names, no control
    /// characters in values but a tab).
    public var headers: [HTTPHeader]
    /// Headers sent with the first request only, not with any redirect (validated likewise).
    public var firstRequestHeaders: [HTTPHeader] = []
    /// Headers of the first request known only later (the serving network a modem confirms
    /// beside the chain): asked once the first request's connection is up (its DNS, TCP and TLS
    /// done), just before the request is written, on the chain's thread, which it may block for
    /// as long as the caller bounds it. A header that fails `headers`' checks fails the hop.
    public var lateFirstRequestHeaders: (@Sendable () -> [HTTPHeader])?
    /// Request body of the first hop, if any.
    public var body: [UInt8]?
    /// Most requests the chain may make; a chain that ends at request `maxHops` succeeds.
    public var maxHops: Int
    /// Budget of one hop: DNS, connect, TLS, request and the whole response.
    public var hopTimeout: Duration
    /// Budget of the whole chain.
    public var totalTimeout: Duration
    /// Address family used on the cellular path.
    public var ipType: IPType
    /// Stop at the first redirect whose Location starts with this prefix (e.g. a redirect_url).
    public var stopAtPrefix: String?
    /// Also stop at the first redirect whose resolved target this returns true for (the
    /// workflow stops at a redirect_url carrying a check's result).
    public var stopAtRedirect: (@Sendable (String) -> Bool)?
    /// Refuse a downgrade to plain http (`HopTrace.downgrade`) instead of only reporting it.
    public var strict: Bool
    /// Extra CA bundle (PEM) trusted besides the system store; verification is never off.
    public var caFile: String?
    /// Bytes of each response body kept in memory; the rest is read and counted, not kept.
    public var maxBodyBytes: Int

    public init(
        url: String, method: String = "GET", headers: [HTTPHeader] = [], body: [UInt8]? = nil,
        maxHops: Int = 10, hopTimeout: Duration = .seconds(5), totalTimeout: Duration = .seconds(30),
        ipType: IPType = .any, stopAtPrefix: String? = nil, strict: Bool = false,
        caFile: String? = nil, maxBodyBytes: Int = 1 << 20
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.maxHops = maxHops
        self.hopTimeout = hopTimeout
        self.totalTimeout = totalTimeout
        self.ipType = ipType
        self.stopAtPrefix = stopAtPrefix
        self.strict = strict
        self.caFile = caFile
        self.maxBodyBytes = maxBodyBytes
    }
}
