import CellpathCore
import SimulatedModems
import SimulatedServices
import SimulatorScenario

/// The names and addresses of one simulated world (docs/simulator.md "Topology"): three
/// namespaces named after a prefix, one TUN pair per modem, a TUN pair for Wi-Fi and a veth
/// between carrier and internet. Pure values; building the world is `WorldBuilder`'s job.
public struct WorldTopology: Sendable, Equatable, Codable {
    /// The namespace prefix, e.g. `cp-`.
    public var prefix: String
    /// How many modems (TUN pairs wwanN/radioN) the world has.
    public var modemCount: Int
    /// The device-side TUN name of each modem: its profile's net device (`wwanN`, `mhi_hwipN`, `usbN`).
    public var modemInterfaces: [String]

    /// A world of `modemCount` modems of the idealised shape (`wwanN` each).
    public init(prefix: String, modemCount: Int) {
        self.prefix = prefix
        self.modemCount = modemCount
        modemInterfaces = (0 ..< modemCount).map { "wwan\($0)" }
    }

    /// The world of `scenario`'s modems, each net device named as its profile names it. A modem
    /// without a net device (the L850) keeps a TUN `wwanN` that nothing in sysfs announces: the
    /// data plane has a TUN pair per modem.
    public init(prefix: String, scenario: Scenario) {
        self.prefix = prefix
        modemCount = scenario.modems.count
        modemInterfaces = scenario.modems.enumerated().map { n, modem in
            modem.profile.netDeviceName(index: n) ?? "wwan\(n)"
        }
    }

    /// The default namespace prefix.
    public static let defaultPrefix = "cp-"

    /// Checks that `prefix` makes valid namespace and directory names (the `sim.prefix`
    /// setting's rule): 1 to 8 letters, digits, '-' and '_', starting with a letter or digit.
    public static func validate(prefix: String) throws {
        func isAlphanumeric(_ c: UInt8) -> Bool {
            (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)
        }
        let ok =
            (1 ... 8).contains(prefix.utf8.count)
            && prefix.utf8.first.map(isAlphanumeric) == true
            && prefix.utf8.allSatisfy { isAlphanumeric($0) || $0 == 0x2d || $0 == 0x5f }
        if !ok {
            throw CellpathError(
                .usage,
                "invalid simulator prefix '\(prefix)': use 1 to 8 letters, digits, '-' or '_', starting with a letter or digit"
            )
        }
    }

    /// The device namespace, where cellpath runs (`cp-ue`).
    public var ueNamespace: String { prefix + "ue" }
    /// The operator core namespace (`cp-carrier`).
    public var carrierNamespace: String { prefix + "carrier" }
    /// The internet namespace with the fake API and the Wi-Fi gateway (`cp-inet`).
    public var inetNamespace: String { prefix + "inet" }
    /// All three namespaces, device first.
    public var namespaces: [String] { [ueNamespace, carrierNamespace, inetNamespace] }

    /// The TUN device of modem `n` in the device namespace (`wwanN`, or its profile's name).
    public func modemInterface(_ n: Int) -> String {
        modemInterfaces.indices.contains(n) ? modemInterfaces[n] : "wwan\(n)"
    }
    /// The carrier-side TUN peer of modem `n` (`radioN`).
    public func radioInterface(_ n: Int) -> String { "radio\(n)" }
    /// The IPv4 address the carrier assigns to modem `n`'s bearer: 100.64.23.(10+n).
    public func bearerAddress(_ n: Int) -> String { BearerAddressPlan.ipv4Address(n) }
    /// The /64 the carrier assigns to modem `n`'s bearer: 2001:db8:64:(0x10+n)::/64.
    public func bearerIPv6Prefix(_ n: Int) -> String {
        "\(BearerAddressPlan.ipv6Prefix(n))/\(BearerAddressPlan.ipv6PrefixLength)"
    }
    /// The IPv6 address the modem reports in its /64: 2001:db8:64:(0x10+n)::2.
    public func bearerIPv6Address(_ n: Int) -> String { BearerAddressPlan.ipv6Address(n) }
    /// Route metric of modem `n`'s default route (above Wi-Fi's, as NetworkManager does).
    public func bearerRouteMetric(_ n: Int) -> Int { 700 + n }

    /// Routing table (and rule priority) of modem `n`'s source-address rule.
    public func bearerRouteTable(_ n: Int) -> Int { 1000 + n }

    /// The device's Wi-Fi interface (a TUN, so the relay can add the Wi-Fi delay).
    public static let wlanInterface = "wlan0"
    /// The Wi-Fi access point's side of the Wi-Fi TUN pair, in the internet namespace.
    public static let wifiPeerInterface = "wifi0"
    /// The device's Wi-Fi address.
    public static let wlanAddress = "192.0.2.23"
    /// Wi-Fi gateway and Wi-Fi DNS server (in the internet namespace).
    public static let wifiGateway = "192.0.2.1"
    /// Route metric of the Wi-Fi default route.
    public static let wlanRouteMetric = 600
    /// The carrier's subscriber-identification endpoint (`mno.carrier.test`).
    public static let carrierEndpointAddress = BearerAddressPlan.ipv4Gateway
    /// The carrier DNS server handed out with every bearer.
    public static let carrierDNSAddress = BearerAddressPlan.ipv4DNS
    /// The veth between carrier and internet: its carrier-side name and address.
    public static let carrierVethInterface = "inet0"
    public static let carrierVethAddress = "198.51.100.1"
    /// The veth's internet-side name and address.
    public static let inetVethInterface = "carrier0"
    public static let inetVethAddress = "198.51.100.2"
    /// The fake tru.ID API's address (`api.truid.test`).
    public static let apiAddress = "203.0.113.10"
    /// Host names served by the simulated DNS.
    public static let apiHost = "api.truid.test"
    public static let carrierHost = "mno.carrier.test"
    /// The fake Twilio Verify API's host, on the API's addresses.
    public static let twilioHost = "verify.twilio.test"
    /// The fake Vonage Verify API's host, on the API's addresses.
    public static let vonageHost = "api.vonage.test"
    /// The fake Vonage network APIs (Number Verification and its OpenID provider), on the API's addresses.
    public static let vonageNetworkHost = "api-eu.vonage.test"
    /// The fake CAMARA operator (its APIs and OpenID provider), on the API's addresses.
    public static let operatorHost = "operator.camara.test"
    /// Every host name served on the API's addresses.
    public static let apiHosts = [apiHost, twilioHost, vonageHost, vonageNetworkHost, operatorHost]
    /// The CAMARA operator's issuer and API root.
    public static let operatorURL = "https://\(operatorHost)"
    /// The world's one CAMARA client and its redirect URI, which the operator serves itself
    /// (`FakeCAMARAOperator.callbackPath`) to count requests that must never come.
    public static let camaraClientID = "cellpath-sim-client"
    public static let camaraRedirectURI = operatorURL + FakeCAMARAOperator.callbackPath
    /// Vonage's network APIs and OpenID provider (one host in the world), and the fake Vonage
    /// application's redirect URI there.
    public static let vonageNetworkURL = "https://\(vonageNetworkHost)"
    public static let vonageRedirectURI = vonageNetworkURL + FakeCAMARAOperator.callbackPath
    /// The range of bearer addresses, routed from the internet to the carrier.
    public static let bearerNetwork = "100.64.0.0/16"

    // IPv6 (docs/simulator.md "Addresses"); every link is a /64, service addresses a /128 on lo.
    /// The device's Wi-Fi IPv6 address (in 2001:db8:2::/64).
    public static let wlanIPv6Address = "2001:db8:2::23"
    /// The Wi-Fi gateway and Wi-Fi DNS over IPv6.
    public static let wifiGatewayIPv6 = "2001:db8:2::1"
    /// The carrier's identification endpoint over IPv6.
    public static let carrierEndpointIPv6 = "2001:db8:64::1"
    /// The carrier DNS over IPv6 (DNS64 in a NAT64 world).
    public static let carrierDNSIPv6 = BearerAddressPlan.ipv6DNS
    /// The carrier ↔ internet veth over IPv6.
    public static let carrierVethIPv6 = "2001:db8:100::1"
    public static let inetVethIPv6 = "2001:db8:100::2"
    /// The fake API's IPv6 address (none in a NAT64 world: an IPv4-only host).
    public static let apiIPv6Address = "2001:db8:113::10"
    /// The range of the carrier's IPv6 addresses (bearer /64s and services), routed from the internet.
    public static let bearerIPv6Network = "2001:db8:64::/48"
    /// NAT64 (RFC 6052 network-specific prefix): IPv6 destinations in it are IPv4 ones, translated by
    /// tayga. Not the well-known 64:ff9b::/96: with that one tayga (as RFC 6052 asks) refuses
    /// non-global IPv4 addresses, and the API's 203.0.113.10 is a documentation address.
    public static let nat64Prefix = "2001:db8:64:ff9b::/96"
    /// tayga's TUN device in the carrier namespace.
    public static let nat64Interface = "nat64"
    /// tayga's IPv4 pool (the sources of translated packets, routed back to the carrier) and own addresses.
    public static let nat64Pool = "100.64.96.0/24"
    /// The fixed NAT64 egress address of modem `n`'s bearer address (…::2): 100.64.96.(10+n), the
    /// operator's mobile IP the internet sees for that subscriber (other sources get pool addresses).
    public func nat64EgressAddress(_ n: Int) -> String { "100.64.96.\(10 + n)" }
    public static let nat64IPv4Address = "100.64.96.1"
    public static let nat64IPv6Address = "2001:db8:64::64"
}
