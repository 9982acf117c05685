import CellpathCore
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// `cellpath fetch --modem 0` over IPv6-only, dual-stack and NAT64 bearers in the simulated
/// world: the real check_url chain completes through the bearer the fetch brings up,
/// and nothing of either family goes through Wi-Fi (which has IPv6 too, and a DNS that answers
/// AAAA), also when the bearer is dropped, its DNS server does not answer, or it has no route.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct IPv6FetchEndToEndTests {
    /// The carrier network of modem 0.
    enum Network: String, CaseIterable, Sendable {
        case ipv6Only, dualStack, nat64

        var scenario: Scenario {
            var scenario = Scenario.builtIn
            scenario.modems[0].ipType = self == .dualStack ? .ipv4v6 : .ipv6
            scenario.modems[0].nat64 = self == .nat64
            return scenario
        }

        /// The address hops to the API connect to: its own IPv6, or the DNS64-synthesised one
        /// (the carrier's NAT64 prefix 2001:db8:64:ff9b::/96 + 203.0.113.10).
        var apiAddress: String { self == .nat64 ? "2001:db8:64:ff9b::cb00:710a" : "2001:db8:113::10" }
    }

    static let bearer6 = "2001:db8:64:10::2"

    @Test(arguments: Network.allCases)
    func theCheckURLChainCompletesOverIPv6AndNothingLeavesThroughWiFi(_ network: Network) throws {
        try SimulatedDevice.with(network.scenario, connect: false) { device in
            let check = try device.subscriberCheckURL()  // backend leg, over Wi-Fi, before the capture
            let logMark = try device.requestLog().count
            let (fetch, packets) = try device.capture(on: ["wlan0"]) {
                try device.cellpath(["fetch", "--modem", "0", check.url, "--json", "-v"])
            }
            #expect(fetch.status == 0, "\(fetch.stderr)")
            #expect(packets["wlan0"] == [], "packets on wlan0 during the chain: \(packets["wlan0"] ?? [])")
            let json = try JSONValue.parse(fetch.stdout)
            let hops = json.hops
            #expect(hops.count == 3)
            // IPv6 first on every hop (on dual stack too), from the bearer's IPv6 address.
            #expect(
                hops.allSatisfy { $0["family"]?.string == "ipv6" && $0["local_address"]?.string == Self.bearer6 },
                "\(hops)")
            #expect(
                hops.map { $0["remote_address"]?.string } == [network.apiAddress, "2001:db8:64::1", network.apiAddress])
            let addresses = json["local_addresses"]?.array?.compactMap(\.string) ?? []
            #expect(
                addresses == (network == .dualStack ? ["100.64.23.10", Self.bearer6] : [Self.bearer6]), "\(addresses)")
            #expect(json["result"]?["callback"]?["check_id"]?.string == check.id)
            // As the servers saw it: api → carrier → api; the carrier identified the subscriber by
            // the bearer's IPv6 address; behind NAT64 the API sees the bearer's fixed egress address
            // of the translator (100.64.96.10 for modem 0), which it takes for a mobile IP.
            let chain = try Array(device.requestLog().dropFirst(logMark))
            #expect(
                chain.map { $0["namespace"]?.string } == [
                    device.prefix + "inet", device.prefix + "carrier", device.prefix + "inet"
                ])
            guard chain.count == 3 else { return }
            #expect(chain[1]["source"]?.string == Self.bearer6, "\(chain)")
            for hop in [chain[0], chain[2]] {
                let source = hop["source"]?.string ?? ""
                #expect(source == (network == .nat64 ? "100.64.96.10" : Self.bearer6), "\(hop)")
            }
            // The bearer this fetch brought up is down again, and its configuration of both families gone.
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try device.run(["ip", "-6", "addr", "show", "dev", "wwan0", "scope", "global"]).stdout.isEmpty)
            #expect(try device.run(["ip", "-6", "rule"]).stdout.contains(Self.bearer6) == false)
        }
    }

    /// A SubscriberCheck with a QMI modem (dual stack: two calls) on an IPv6-only, a dual-stack
    /// and a NAT64 network: verified, its check_url chain over the bearer's IPv6, the backend legs
    /// over Wi-Fi, and the bearer it brought up taken down (both calls, both client IDs).
    @Test(arguments: Network.allCases)
    func aSubscriberCheckThroughAQMIModemIsVerifiedOverIPv6(_ network: Network) throws {
        var scenario = network.scenario
        scenario.modems[0].protocol = .qmi
        scenario.modems[0].sim?.msisdn = "+447940448591"
        try SimulatedDevice.with(scenario, connect: false) { device in
            let check = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            #expect(check.status == 0, "\(check.stderr)")
            let json = try JSONValue.parse(check.stdout)
            #expect(json["outcome"]?.string == "verified", "\(check.stdout)")
            #expect(json["path"]?["ipv6_address"]?.string == Self.bearer6)
            #expect(json["path"]?["ipv4_address"]?.string == (network == .dualStack ? "100.64.23.10" : nil))
            let hops = json["check_url"]?["hops"]?.array ?? []
            #expect(
                hops.count == 3
                    && hops.allSatisfy { $0["local_address"]?.string == Self.bearer6 && $0["family"]?.string == "ipv6" },
                "\(hops)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try device.run(["ip", "-6", "addr", "show", "dev", "wwan0", "scope", "global"]).stdout.isEmpty)
        }
    }

    /// Behind NAT64 the API has no AAAA: the carrier's DNS64 synthesises one, which the hop uses
    /// like any other, from the bearer's IPv6 address; the translator carries it to the IPv4 host.
    @Test func anIPv4OnlyHostIsReachedThroughTheDNS64Address() throws {
        try SimulatedDevice.with(Network.nat64.scenario, connect: false) { device in
            let logMark = try device.requestLog().count
            let (fetch, packets) = try device.capture(on: ["wlan0"]) {
                try device.cellpath(["fetch", "--modem", "0", "https://api.truid.test/.well-known/jwks.json", "--json"])
            }
            #expect(packets["wlan0"] == [], "packets on wlan0: \(packets["wlan0"] ?? [])")
            let hop = try #require(try JSONValue.parse(fetch.stdout).hops.first, "\(fetch.stdout) \(fetch.stderr)")
            #expect(hop["status"]?.int ?? 0 > 0, "an HTTP answer came back: \(hop)")
            #expect(hop["dns_answers"]?.array?.compactMap(\.string) == [Network.nat64.apiAddress], "\(hop)")
            #expect(hop["family"]?.string == "ipv6" && hop["remote_address"]?.string == Network.nat64.apiAddress)
            #expect(hop["local_address"]?.string == Self.bearer6)
            let request = try #require(try device.requestLog().dropFirst(logMark).first)
            #expect(request["namespace"]?.string == device.prefix + "inet")
            #expect(request["source"]?.string == "100.64.96.10", "the translator's egress address: \(request)")
        }
    }

    /// With a bearer up (`bearer up`), `fetch --interface wwan0` fails closed when the bearer's
    /// DNS server does not answer, and when its routes and source rules are gone (the only
    /// default routes left are Wi-Fi's): nothing of either family on Wi-Fi.
    @Test(arguments: Network.allCases)
    func dnsUnreachableAndNoRouteSendNothingThroughWiFi(_ network: Network) throws {
        try SimulatedDevice.with(network.scenario, connect: false) { device in
            let up = try device.cellpath(["bearer", "up", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            let (unreachable, silent) = try device.capture(on: ["wlan0"]) {
                try device.cellpath([
                    "fetch", "--interface", "wwan0", "--dns", "2001:db8:64::99",
                    "http://mno.carrier.test/", "--json"
                ])
            }
            #expect(unreachable.status == 75, "\(unreachable.stderr)")
            #expect(
                try JSONValue.parse(unreachable.stdout)["error"]?["reason"]?.string == "dnsUnreachable",
                "\(unreachable.stdout)")
            #expect(silent["wlan0"] == [], "packets on wlan0: \(silent["wlan0"] ?? [])")

            // No route through the bearer at all: the source rules and default routes go.
            for family in ["-4", "-6"] {
                let rules = try device.run(["ip", family, "rule"]).stdout.split(separator: "\n")
                for rule in rules where rule.contains("from 100.64.23.10") || rule.contains("from \(Self.bearer6)") {
                    let priority = String(rule.prefix { $0 != ":" })
                    #expect(try device.run(["ip", family, "rule", "del", "priority", priority]).status == 0)
                }
                _ = try device.run(["ip", family, "route", "del", "default", "dev", "wwan0"])
            }
            #expect(
                try device.run(["ip", "-6", "route", "get", "2001:db8:64::1", "from", Self.bearer6]).stdout.contains(
                    "dev wlan0"))
            let (routeless, packets) = try device.capture(on: ["wlan0"]) {
                try device.cellpath([
                    "fetch", "--interface", "wwan0", "--dns", "2001:db8:64::53", "--timeout", "5",
                    "http://mno.carrier.test/", "--json"
                ])
            }
            #expect(packets["wlan0"] == [], "packets on wlan0 without a route: \(packets["wlan0"] ?? [])")
            // An IPv6 socket bound to a device with no route through it fails at once (ENETUNREACH;
            // IPv4 would send through the device anyway): the DNS query over IPv6 fails closed.
            #expect(routeless.status == 75, "\(routeless.stderr)")
            #expect(
                try JSONValue.parse(routeless.stdout)["error"]?["reason"]?.string == "dnsUnreachable",
                "\(routeless.stdout)")
            if network == .dualStack {
                // Happy eyeballs: IPv6 fails at once, IPv4 (device-bound, sent through the device
                // without a route) carries the hop, still on the bearer.
                let (fallback, seen) = try device.capture(on: ["wlan0"]) {
                    try device.cellpath([
                        "fetch", "--interface", "wwan0", "--dns", "100.64.0.53", "--timeout", "5",
                        "http://mno.carrier.test/", "--json"
                    ])
                }
                let hop = try JSONValue.parse(fallback.stdout).hops.first
                #expect(
                    hop?["family"]?.string == "ipv4" && hop?["local_address"]?.string == "100.64.23.10",
                    "\(fallback.stdout) \(fallback.stderr)")
                #expect(seen["wlan0"] == [], "packets on wlan0: \(seen["wlan0"] ?? [])")
            }
            let down = try device.cellpath(["bearer", "down"])
            #expect(down.status == 0, "\(down.stderr)")
            #expect(try device.run(["ip", "-6", "addr", "show", "dev", "wwan0", "scope", "global"]).stdout.isEmpty)
        }
    }

    /// The network drops the bearer while the chain waits for a slow API: the fetch fails closed
    /// at once (69), nothing of either family goes through Wi-Fi, and what it configured is gone.
    @Test(arguments: Network.allCases)
    func aBearerDroppedDuringTheFetchFailsItClosed(_ network: Network) throws {
        try SimulatedDevice.withBearerDroppedDuringAFetch(network.scenario) { device, _ throws in
            #expect(try device.run(["ip", "-6", "addr", "show", "dev", "wwan0", "scope", "global"]).stdout.isEmpty)
            #expect(try device.run(["ip", "-6", "rule"]).stdout.contains(Self.bearer6) == false)
        }
    }
}
