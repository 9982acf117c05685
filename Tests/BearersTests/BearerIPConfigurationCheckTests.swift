import CellpathCore
import SystemSupport
import Testing

@testable import Bearers

/// The IP configuration a modem reports, checked before cellpath applies it.
@Suite struct BearerIPConfigurationCheckTests {
    /// The device of the simulated world: Wi-Fi on 192.0.2.23/24, loopback, the bearer's wwan0.
    static let networks = [
        InterfaceNetwork(interface: "lo", address: "127.0.0.1", prefixLength: 8),
        InterfaceNetwork(interface: "lo", address: "::1", prefixLength: 128),
        InterfaceNetwork(interface: "wlan0", address: "192.0.2.23", prefixLength: 24),
        InterfaceNetwork(interface: "wlan0", address: "2001:db8:2::23", prefixLength: 64),
        InterfaceNetwork(interface: "wlan0", address: "fe80::1", prefixLength: 64),
        InterfaceNetwork(interface: "wwan0", address: "100.64.23.10", prefixLength: 32)
    ]

    private func check(_ bearer: BearerStatus, wanted: BearerIPType = .ipv4) throws -> (BearerStatus, [String]) {
        var warnings: [String] = []
        let checked = try BearerIPConfigurationCheck(
            modemIndex: 0, interface: "wwan0", wanted: wanted, networks: Self.networks
        )
        .checked(bearer) { warnings.append($0) }
        return (checked, warnings)
    }

    private func refusal(_ bearer: BearerStatus, wanted: BearerIPType = .ipv4) -> CellpathError? {
        do {
            _ = try check(bearer, wanted: wanted)
            return nil
        } catch {
            return error as? CellpathError
        }
    }

    private static let good = BearerStatus(
        state: .connected, ipv4Address: "100.64.23.10", dnsServers: ["100.64.0.53"], mtu: 1500)

    @Test func theCarriersOwnConfigurationPassesUnchanged() throws {
        let (checked, warnings) = try check(Self.good)
        #expect(checked == Self.good)
        #expect(warnings.isEmpty)
    }

    @Test(arguments: [
        ("0.0.0.0", "unspecified"), ("127.0.0.2", "loopback"), ("169.254.7.7", "link-local"),
        ("224.0.0.1", "multicast"), ("255.255.255.255", "reserved or broadcast")
    ])
    func anAddressThatIsNoBearersIsRefused(address: String, kind: String) {
        var bearer = Self.good
        bearer.ipv4Address = address
        let error = refusal(bearer)
        #expect(error?.kind == .protocolError)
        #expect(
            error?.message == "modem 0 reports \(address) as its bearer's IPv4 address: \(kind), not a bearer address")
        #expect(error?.hint != nil)
    }

    @Test func aLinkLocalIPv6AddressIsRefusedWhenIPv6IsWantedOnly() throws {
        var bearer = Self.good
        bearer.ipv6Address = "fe80::2"
        bearer.ipv6PrefixLength = 64
        let error = refusal(bearer, wanted: .ipv4v6)
        #expect(
            error?.message == "modem 0 reports fe80::2 as its bearer's IPv6 address: link-local, not a bearer address")
        #expect(error?.hint?.hasPrefix("reconnect the bearer") == true, "the bring-up waits for SLAAC before the check")
        #expect(try check(bearer, wanted: .ipv4).0 == bearer)  // IPv6 not asked for: not used, not refused
    }

    @Test func anAddressInAnotherInterfacesNetworkIsRefused() throws {
        var bearer = Self.good
        bearer.ipv4Address = "192.0.2.50"
        let error = refusal(bearer)
        #expect(error?.kind == .unavailable)
        #expect(error?.message == "modem 0's bearer address 192.0.2.50 lies in wlan0's network 192.0.2.23/24")
        bearer.ipv4Address = "192.0.3.50"
        #expect(refusal(bearer) == nil)
        var ipv6 = BearerStatus(
            state: .connected, dnsServers: ["2001:db8:64::53"], ipv6Address: "2001:db8:2::99", ipv6PrefixLength: 64)
        #expect(
            refusal(ipv6, wanted: .ipv6)?.message
                == "modem 0's bearer address 2001:db8:2::99 lies in wlan0's network 2001:db8:2::23/64")
        ipv6.ipv6Address = "2001:db8:64:10::2"
        #expect(refusal(ipv6, wanted: .ipv6) == nil)
    }

    @Test func theBearersOwnInterfaceHoldingItsAddressIsNoConflict() {
        // A reused bearer: cellpath configured wwan0 with the address before.
        #expect(refusal(Self.good) == nil)
    }

    @Test func dnsServersThePathCannotUseAreLeftOutWithAWarning() throws {
        var bearer = Self.good
        bearer.dnsServers = ["0.0.0.0", "127.0.0.53", "192.0.2.23", "100.64.0.53"]
        let (checked, warnings) = try check(bearer)
        #expect(checked.dnsServers == ["100.64.0.53"])
        #expect(
            warnings == [
                "modem 0 reports 0.0.0.0 as a DNS server: left out (unspecified)",
                "modem 0 reports 127.0.0.53 as a DNS server: left out (loopback)",
                "modem 0 reports 192.0.2.23 as a DNS server: left out (an address of this host)"
            ])
    }

    @Test func noUsableDNSServerIsARefusal() {
        var bearer = Self.good
        bearer.dnsServers = ["0.0.0.0", "127.0.0.53"]
        let error = refusal(bearer)
        #expect(error?.kind == .protocolError)
        #expect(
            error?.message
                == "modem 0 reports no usable DNS server for its bearer: 0.0.0.0 (unspecified), 127.0.0.53 (loopback)")
        // A bad server of a family that is not used does not matter.
        bearer.dnsServers = ["100.64.0.53", "::"]
        #expect(refusal(bearer) == nil)
    }

    /// ModemManager drops a 0.0.0.0 DNS server and reports none: the same refusal, as the path
    /// could resolve no name.
    @Test func noDNSServerReportedIsARefusal() {
        var bearer = Self.good
        bearer.dnsServers = []
        let error = refusal(bearer)
        #expect(error?.kind == .protocolError)
        #expect(error?.message == "modem 0 reports no usable DNS server for its bearer: none")
        // Only an IPv6 server for an IPv4-only path: none the path can ask either.
        bearer.dnsServers = ["2001:db8:64::53"]
        #expect(
            refusal(bearer)?.message
                == "modem 0 reports no usable DNS server for its bearer: none of its address family (2001:db8:64::53)")
        // No address of the family asked for: the bring-up's refusal, not this one.
        #expect(refusal(bearer, wanted: .ipv6) == nil)
    }

    @Test func aHugeMTUIsClampedAndATinyOneRefused() throws {
        var bearer = Self.good
        bearer.mtu = 65535
        let (clamped, warnings) = try check(bearer)
        #expect(clamped.mtu == 1500)
        #expect(warnings == ["modem 0 reports an MTU of 65535 for its bearer: clamped to 1500"])
        bearer.mtu = 100
        #expect(
            refusal(bearer)?.message
                == "modem 0 reports an MTU of 100 for its bearer: too small for IPv4 (at least 576)")
        bearer.mtu = 1000
        #expect(refusal(bearer) == nil)
        bearer.ipv6Address = "2001:db8:64:10::2"
        #expect(
            refusal(bearer, wanted: .ipv4v6)?.message
                == "modem 0 reports an MTU of 1000 for its bearer: too small for IPv6 (at least 1280)")
        bearer.mtu = 0
        #expect(try check(bearer).0.mtu == nil)  // 0: none reported, the interface keeps its own
    }
}
