/// How `cellpath serve` listens and what it lets through.
public struct ServeSettings: Sendable {
    /// Numeric address and port to listen on.
    public var listenAddress: String
    public var listenPort: Int
    /// PEM files of the server's certificate chain and key; plain HTTP without them.
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// The key clients must send (`Authorization: Bearer KEY` or `X-Api-Key: KEY`); none when nil.
    public var apiKey: String?
    /// Origins whose web pages may call serve, answered with CORS headers (`*`: any, as the
    /// dev-server does); none by default: a request carrying another `Origin` is refused.
    public var corsOrigins: [String]
    /// Names clients may reach serve by (`Host`), besides its listen address (and `localhost`
    /// on a loopback address); any other `Host` is refused, against DNS rebinding.
    public var serverNames: [String]
    /// Whether form bodies (`application/x-www-form-urlencoded`) are read, as the dev-server
    /// reads them; JSON only otherwise, since a web page may send a form without asking.
    public var allowsFormBodies: Bool
    /// Whether `GET /coverage-access-token` hands out coverage tokens.
    public var offersCoverageToken: Bool
    /// Region for numbers written without a country code.
    public var defaultRegion: String?
    public var limits: ServeLimits
    /// Log request paths and client addresses in full (personal data).
    public var logPersonalData: Bool

    public init(
        listenAddress: String = "127.0.0.1", listenPort: Int = 8080, tlsCertificate: String? = nil,
        tlsKey: String? = nil,
        apiKey: String? = nil, corsOrigins: [String] = [], serverNames: [String] = [], allowsFormBodies: Bool = false,
        offersCoverageToken: Bool = false, defaultRegion: String? = nil, limits: ServeLimits = ServeLimits(),
        logPersonalData: Bool = false
    ) {
        self.listenAddress = listenAddress
        self.listenPort = listenPort
        self.tlsCertificate = tlsCertificate
        self.tlsKey = tlsKey
        self.apiKey = apiKey
        self.corsOrigins = corsOrigins
        self.serverNames = serverNames
        self.allowsFormBodies = allowsFormBodies
        self.offersCoverageToken = offersCoverageToken
        self.defaultRegion = defaultRegion
        self.limits = limits
        self.logPersonalData = logPersonalData
    }
}

/// Bounds on what one client or request may take.
public struct ServeLimits: Sendable {
    /// Bytes of a request body (413 beyond).
    public var maxBodyBytes: Int = 16 * 1024
    /// Bytes of a trace body kept for the log.
    public var maxTraceBytes: Int = 8 * 1024
    /// Bytes of a request's header block (431 beyond).
    public var maxHeaderBytes: Int = 16 * 1024
    /// Connections open at once; more are refused.
    public var maxConnections: Int = 512
    /// Connections open at once from one client address; more are refused.
    public var maxConnectionsPerAddress: Int = 64
    /// Requests being answered at once; more get 503 with Retry-After.
    public var maxRequestsInFlight: Int = 256
    /// Requests per client address and minute (429 beyond); 0: no limit.
    public var requestsPerMinute: Int = 600
    /// Seconds a connection may stay idle or slow before it is closed.
    public var idleTimeoutSeconds: Int = 30
    /// Seconds a connection has to deliver a whole request, from its opening or previous answer.
    public var requestTimeoutSeconds: Int = 20
    /// Bound on each upstream call to the tru.ID API.
    public var upstreamTimeout: Duration = .seconds(10)
    /// Bound on finishing the requests in flight after SIGTERM.
    public var drainTimeout: Duration = .seconds(10)

    public init() {}
}
