/// What a bearer is connected with: the access point, the address family and the credentials.
public struct BearerSettings: Sendable, Equatable {
    /// The access point name; nil lets the network pick the subscription's default (what the
    /// modem's provisioned context connects to).
    public var apn: String?
    public var ipType: BearerIPType
    public var authentication: BearerAuthentication
    public var user: String?
    /// A secret: never logged, never on the command line (a file or the environment).
    public var password: String?

    public init(
        apn: String? = nil, ipType: BearerIPType = .ipv4, authentication: BearerAuthentication = .none,
        user: String? = nil, password: String? = nil
    ) {
        self.apn = apn
        self.ipType = ipType
        self.authentication = authentication
        self.user = user
        self.password = password
    }
}

/// The address families a bearer is asked for (and granted): IPv4, IPv6, or both (dual stack).
/// The network grants what it allows of it.
public enum BearerIPType: String, Sendable, Equatable, CaseIterable {
    case ipv4, ipv6, ipv4v6

    public var includesIPv4: Bool { self != .ipv6 }
    public var includesIPv6: Bool { self != .ipv4 }
}

/// How the network authenticates the connection (PPP-style, for APNs that ask for it).
public enum BearerAuthentication: String, Sendable, Equatable, CaseIterable {
    case none, pap, chap, mschapv2
}
