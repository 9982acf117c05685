/// One query parameter, percent-decoded; a name may repeat.
public struct HTTPQueryItem: Sendable, Equatable {
    public var name: String
    public var value: String?

    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}

/// A complete HTTP request as the handler sees it: the body is fully read (chunked uploads
/// are decoded), the path is percent-decoded and carries no query string.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var path: String
    /// The request target exactly as the client sent it: path and query, not decoded.
    public var target: String
    public var queryItems: [HTTPQueryItem]
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The peer's numeric address (IPv4 dotted or IPv6 text, no brackets).
    public var remoteAddress: String
    public var remotePort: Int
    /// Whether the request arrived over TLS.
    public var isTLS: Bool

    /// `target` defaults to `path`.
    public init(
        method: String, path: String, target: String? = nil, queryItems: [HTTPQueryItem] = [],
        headers: HTTPHeaders = [:],
        body: [UInt8] = [], remoteAddress: String = "127.0.0.1", remotePort: Int = 40000,
        isTLS: Bool = true
    ) {
        self.method = method
        self.path = path
        self.target = target ?? path
        self.queryItems = queryItems
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        self.isTLS = isTLS
    }

    /// The first value of query parameter `name`, or nil when absent or valueless.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The body decoded as UTF-8 (invalid bytes replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
