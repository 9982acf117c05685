import CellpathCore

/// Durations of one hop's phases, in milliseconds (nil when the phase did not happen).
public struct HopTimings: Sendable, Equatable, Codable {
    /// c-ares lookup through the cellular path (0 when answered from a cache: `HopTrace.dnsSource`).
    public var dnsMs: Double
    /// TCP connect (nil on a reused connection).
    public var connectMs: Double?
    /// TLS handshake (nil for http or a reused connection).
    public var tlsMs: Double?
    /// From the request being sent to the first response byte.
    public var firstByteMs: Double
    /// The whole hop, DNS included.
    public var totalMs: Double

    /// Values are kept to the microsecond (what curl and the clock resolve).
    public init(dnsMs: Double, connectMs: Double?, tlsMs: Double?, firstByteMs: Double, totalMs: Double) {
        self.dnsMs = microseconds(dnsMs)
        self.connectMs = connectMs.map(microseconds)
        self.tlsMs = tlsMs.map(microseconds)
        self.firstByteMs = microseconds(firstByteMs)
        self.totalMs = microseconds(totalMs)
    }
}

/// Where a hop's DNS answers came from.
public enum DNSSource: String, Sendable, Equatable, Codable {
    /// Asked through the bearer for this hop.
    case network
    /// An earlier hop of the same chain asked.
    case chain
    /// An earlier chain on the same bearer asked, and their TTL has not run out (`BearerDNSCache`).
    case bearerCache = "bearer-cache"
}

/// What happened on one request of the chain.
public struct HopTrace: Sendable, Equatable, Codable {
    /// 1-based position in the chain.
    public var index: Int
    public var method: String
    public var url: String
    /// HTTP status, 0 when no response arrived.
    public var status: Int
    /// Absolute URL of the redirect target, resolved from the Location header.
    public var location: String?
    public var remoteAddress: String
    public var remotePort: Int
    /// The address family the hop used, `ipv4` or `ipv6` (from its remote address; a NAT64
    /// address is IPv6); nil when no connection was made.
    public var family: String?
    public var localAddress: String
    public var localPort: Int
    /// True when the hop went over a connection opened by an earlier hop.
    public var connectionReused: Bool
    /// e.g. `TLSv1.3`; nil for plain http.
    public var tlsVersion: String?
    /// e.g. `HTTP/1.1`.
    public var httpVersion: String
    public var timings: HopTimings
    /// Addresses the cellular DNS returned for this hop's host (nil for an address literal).
    public var dnsAnswers: [String]?
    /// Where `dnsAnswers` came from (nil when there are none).
    public var dnsSource: DNSSource?
    /// Seconds the answers may be kept: their TTL from the network (the smallest of the records),
    /// what is left of it from the bearer's cache; nil otherwise.
    public var dnsTTL: Int?
    /// Selected response headers (Location, Content-Type, Set-Cookie, …).
    public var responseHeaders: [HTTPHeader]
    /// Request headers as sent on the wire.
    public var requestHeaders: [HTTPHeader]
    /// Response body bytes received (all of them, also beyond the kept cap).
    public var bodyBytes: Int
    /// Response header bytes received.
    public var headerBytes: Int
    /// True when this hop is a downgrade: plain http to a host the chain reached over https, or
    /// plain http carrying a credential after https (not the carrier's plain-http leg to a new host).
    public var downgrade: Bool
    /// Wall-clock start of the hop (seconds since 1970, to the microsecond).
    public var startedAt: Double

    public init(
        index: Int, method: String, url: String, status: Int, location: String?, remoteAddress: String, remotePort: Int,
        localAddress: String, localPort: Int, connectionReused: Bool, tlsVersion: String?, httpVersion: String,
        timings: HopTimings, dnsAnswers: [String]?, dnsSource: DNSSource? = nil, dnsTTL: Int? = nil,
        responseHeaders: [HTTPHeader], requestHeaders: [HTTPHeader], bodyBytes: Int, headerBytes: Int, downgrade: Bool,
        startedAt: Double
    ) {
        self.index = index
        self.method = method
        self.url = url
        self.status = status
        self.location = location
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        family = remoteAddress.isEmpty ? nil : remoteAddress.contains(":") ? "ipv6" : "ipv4"
        self.localAddress = localAddress
        self.localPort = localPort
        self.connectionReused = connectionReused
        self.tlsVersion = tlsVersion
        self.httpVersion = httpVersion
        self.timings = timings
        self.dnsAnswers = dnsAnswers
        self.dnsSource = dnsSource
        self.dnsTTL = dnsTTL
        self.responseHeaders = responseHeaders
        self.requestHeaders = requestHeaders
        self.bodyBytes = bodyBytes
        self.headerBytes = headerBytes
        self.downgrade = downgrade
        self.startedAt = startedAt
    }
}

/// A chain that completed: its final response, or where it stopped at `stopAtPrefix`.
public struct FetchResult: Sendable, Equatable, Codable {
    public var finalStatus: Int
    public var finalURL: String
    /// The kept part of the final body, decoded as UTF-8 (lossy).
    public var finalBody: String
    /// True when the final body was longer than `maxBodyBytes`.
    public var finalBodyTruncated: Bool
    public var finalContentType: String?
    /// The final body when it is JSON.
    public var json: JSONValue?
    /// The redirect target the chain stopped at (`stopAtPrefix`, `stopAtRedirect`), query and fragment kept.
    public var stoppedAt: String?

    public init(
        finalStatus: Int, finalURL: String, finalBody: String, finalBodyTruncated: Bool, finalContentType: String?,
        json: JSONValue?, stoppedAt: String?
    ) {
        self.finalStatus = finalStatus
        self.finalURL = finalURL
        self.finalBody = finalBody
        self.finalBodyTruncated = finalBodyTruncated
        self.finalContentType = finalContentType
        self.json = json
        self.stoppedAt = stoppedAt
    }
}

/// Why a fetch failed; each has its own message and maps to one `FailureKind`.
public enum FetchFailureReason: String, Sendable, Codable, CaseIterable {
    case malformedURL, invalidHeader, nonHTTPScheme, invalidDNSServer, localDestination
    case noSuchInterface, interfaceDown, noAddress, addressGone, bindRefused
    case dnsUnreachable, dnsNoAnswer, dnsNoSuchName, dnsRefused, dnsFailure
    case connectFailed, connectTimeout, hopTimeout, totalTimeout, transportError
    case notHTTP, headerTooLarge
    case tooManyHops, redirectLoop, downgradeRefused, tlsFailure
    case cancelled, internalError

    /// The category (and so the exit code) of this reason.
    public var kind: FailureKind {
        switch self {
        case .malformedURL, .invalidHeader, .nonHTTPScheme, .invalidDNSServer, .localDestination: return .dataError
        case .noSuchInterface, .interfaceDown, .noAddress, .addressGone: return .unavailable
        case .bindRefused: return .permission
        case .dnsUnreachable, .dnsFailure, .connectTimeout, .hopTimeout, .totalTimeout,
            .transportError:
            return .temporary
        case .dnsNoAnswer, .dnsRefused, .connectFailed, .tlsFailure: return .unavailable
        case .dnsNoSuchName: return .noHost
        case .notHTTP, .headerTooLarge: return .protocolError
        case .tooManyHops, .redirectLoop, .downgradeRefused: return .dataError
        case .cancelled: return .cancelled
        case .internalError: return .internalError
        }
    }
}

/// A failed fetch: the reason, a message for the user and the hop it happened on.
public struct FetchFailure: Error, Sendable, Equatable, Codable {
    public var reason: FetchFailureReason
    public var message: String
    public var hint: String?
    /// 1-based hop the failure belongs to; nil when it happened before the first request.
    public var hop: Int?

    public init(_ reason: FetchFailureReason, _ message: String, hint: String? = nil, hop: Int? = nil) {
        self.reason = reason
        self.message = message
        self.hint = hint
        self.hop = hop
    }

    /// The failure as the error type that crosses module boundaries.
    public var cellpathError: CellpathError { CellpathError(reason.kind, message, hint: hint) }
}

/// Everything a fetch produced: the path used, each hop, and either a result or a failure.
public struct FetchReport: Sendable, Equatable, Codable {
    public var interfaceName: String
    /// The modem backend that gave the path (`mbim`, `qmi`, `modemmanager`); nil with `--interface`.
    public var modemBackend: String?
    public var localAddresses: [String]
    public var dnsServers: [String]
    public var hops: [HopTrace]
    public var result: FetchResult?
    public var failure: FetchFailure?
    public var totalMs: Double

    public init(
        interfaceName: String, modemBackend: String? = nil, localAddresses: [String], dnsServers: [String],
        hops: [HopTrace],
        result: FetchResult?, failure: FetchFailure?, totalMs: Double
    ) {
        self.interfaceName = interfaceName
        self.modemBackend = modemBackend
        self.localAddresses = localAddresses
        self.dnsServers = dnsServers
        self.hops = hops
        self.result = result
        self.failure = failure
        self.totalMs = totalMs
    }
}
