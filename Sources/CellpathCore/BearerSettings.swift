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

    public init(apn: String? = nil, ipType: BearerIPType = .ipv4, authentication: BearerAuthentication = .none,
                user: String? = nil, password: String? = nil) {
        self.apn = apn
        self.ipType = ipType
        self.authentication = authentication
        self.user = user
        self.password = password
    }
}

/// The address family of a bearer. Only IPv4 is connected today.
public enum BearerIPType: String, Sendable, Equatable, CaseIterable {
    case ipv4, ipv6, ipv4v6
}

/// How the network authenticates the connection (PPP-style, for APNs that ask for it).
public enum BearerAuthentication: String, Sendable, Equatable, CaseIterable {
    case none, pap, chap, mschapv2
}
