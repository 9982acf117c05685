/// Where cellular traffic must go: the modem's network interface, the bearer's own
/// addresses and the bearer's DNS servers. The HTTP engine binds every socket to it.
public struct CellularPath: Sendable, Equatable, Codable {
    /// Network interface of the bearer, e.g. `wwan0`.
    public var interfaceName: String
    /// The bearer's IPv4 address (no prefix), if it has one.
    public var ipv4Address: String?
    /// The bearer's IPv6 address (no prefix), if it has one.
    public var ipv6Address: String?
    /// The IPv6 address's on-link prefix length and the IPv6 gateway, when the modem reported them.
    public var ipv6PrefixLength: Int?
    public var ipv6Gateway: String?
    /// DNS servers announced by the bearer, as numeric addresses of either family.
    public var dnsServers: [String]
    /// MTU announced by the bearer, if any.
    public var mtu: Int?
    /// Operator of the serving network as MCC-MNC (e.g. `001-01`); the workflow sends it as `x-tru-ops`.
    public var operatorID: String?
    /// The modem backend that brought the bearer up or found it (`mbim`, `qmi`, `modemmanager`);
    /// nil for an interface named by the user.
    public var modemBackend: String?

    public init(
        interfaceName: String, ipv4Address: String? = nil, ipv6Address: String? = nil,
        dnsServers: [String], mtu: Int? = nil, operatorID: String? = nil, modemBackend: String? = nil,
        ipv6PrefixLength: Int? = nil, ipv6Gateway: String? = nil
    ) {
        self.interfaceName = interfaceName
        self.ipv4Address = ipv4Address
        self.ipv6Address = ipv6Address
        self.dnsServers = dnsServers
        self.mtu = mtu
        self.operatorID = operatorID
        self.modemBackend = modemBackend
        self.ipv6PrefixLength = ipv6PrefixLength
        self.ipv6Gateway = ipv6Gateway
    }
}

/// Supplies the cellular path for a run. The modem layer implements it; the workflow engine
/// and the HTTP engine only see this protocol.
public protocol CellularPathProvider: Sendable {
    /// Returns a usable cellular path, bringing a bearer up when needed.
    func cellularPath() async throws(CellpathError) -> CellularPath
    /// Releases what `cellularPath()` brought up (a bearer this run connected), if anything.
    func release() async
    /// The radio of the path's modem now, while the path is up; nil where there is no modem
    /// to ask (an interface named by the user) or it could not be read.
    func radioContext() async -> RadioContext?
    /// A GNSS fix from the path's modem (`--location`), waiting at most `bound`; why there is
    /// none otherwise.
    func gnssFix(within bound: Duration) async -> GNSSReading
    /// Throws when the path `cellularPath()` gave before asking the modem (from cellpath's
    /// record of the bearer) turns out to be gone as the modem sees it; returns once the modem
    /// confirms it, or at once when there was nothing to confirm. Called beside the run.
    func confirmPath() async throws(CellpathError)
    /// The serving network's MCC-MNC as the modem tells it beside the run, for a path
    /// `cellularPath()` gave from cellpath's record before asking the modem: waits for that
    /// answer. nil when the path's own `operatorID` is already the modem's answer, or the modem
    /// did not tell.
    func servingNetworkNow() async -> String?
}

extension CellularPathProvider {
    /// A path without a modem to ask has no radio context.
    public func radioContext() async -> RadioContext? { nil }
    /// Nor a GNSS fix.
    public func gnssFix(within bound: Duration) async -> GNSSReading { .noFix("the path has no modem to ask") }
    /// A path the modem was asked for first has nothing left to confirm.
    public func confirmPath() async throws(CellpathError) {}
    /// Nor a serving network newer than the path's.
    public func servingNetworkNow() async -> String? { nil }
}
