import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// Field mode keeps the DNS answers obtained through the bearer for their TTL (the simulated
/// carrier DNS answers with 60 s): later runs on the same bearer take them from the cache, say
/// so in their trace, and ask the carrier DNS nothing.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct BearerDNSCacheEndToEndTests {
    @Test func laterRunsOnTheSameBearerTakeTheirAnswersFromTheBearersCache() throws {
        try SimulatedDevice.with(connect: false) { device in
            let daemonLog = RunDirectory(prefix: device.prefix).logFile
            let result = try device.cellpath([
                "subscriber-check", "+447940448591", "-m", "0", "--direct", "--repeat", "3", "--json"
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let runs = try result.stdout.split(separator: "\n").prefix(3).map { try JSONValue.parse(String($0)) }
            try #require(runs.count == 3)
            let bearerAddress = try #require(runs[0]["path"]?["ipv4_address"]?.string)
            let hops = runs.map { $0["check_url"]?["hops"]?.array ?? [] }
            let hosts = Self.hostsAsked(hops[0])
            #expect(hosts.contains("api.truid.test") && hosts.contains("mno.carrier.test"), "\(hops[0])")

            // Run 1 asks each host once through the bearer (with the carrier DNS's TTL); a later
            // hop to the same host takes the chain's answer.
            for (n, runHops) in hops.enumerated() {
                var seen = Set<String>()
                for hop in runHops {
                    guard let host = Self.host(of: hop), hop["dns_answers"] != nil else { continue }
                    let first = seen.insert(host).inserted
                    let expected = !first ? "chain" : n == 0 ? "network" : "bearer-cache"
                    #expect(hop["dns_source"]?.string == expected, "run \(n + 1), \(host): \(hop)")
                    if expected == "network" { #expect(hop["dns_ttl"] == .int(60), "\(hop)") }
                    if expected == "bearer-cache" {
                        #expect([.int(0), .double(0)].contains(hop["timings"]?["dns_ms"]), "\(hop)")
                        #expect((1 ... 60).contains(hop["dns_ttl"]?.int ?? 0), "\(hop)")
                    }
                }
            }

            // The carrier DNS was asked once per host, by run 1.
            for host in hosts {
                #expect(try Self.queries(for: host, from: bearerAddress, in: daemonLog) == 1, "\(host)")
            }

            // A single run keeps no cache: it asks the carrier DNS again.
            let single = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            #expect(single.status == 0, "\(single.stderr)")
            let singleHops = try JSONValue.parse(single.stdout)["check_url"]?["hops"]?.array ?? []
            #expect(singleHops.contains { $0["dns_source"]?.string == "network" }, "\(singleHops)")
            #expect(!singleHops.contains { $0["dns_source"]?.string == "bearer-cache" }, "\(singleHops)")
            let singleAddress = try #require(try JSONValue.parse(single.stdout)["path"]?["ipv4_address"]?.string)
            for host in Self.hostsAsked(singleHops) {
                #expect(
                    try Self.queries(for: host, from: singleAddress, in: daemonLog)
                        == (singleAddress == bearerAddress ? 2 : 1), "\(host)")
            }
        }
    }

    /// `-m all`: each modem's runs share their own bearer's cache.
    @Test func eachModemsLaterRunsTakeTheirAnswersFromItsOwnBearersCache() throws {
        var scenario = Scenario.builtIn
        var second = scenario.modems[0]
        second.protocol = .qmi
        second.imei = "351234567890132"
        second.sim?.iccid = "8900101234567890138"
        second.sim?.imsi = "001010123456780"
        second.sim?.msisdn = "+447940448593"
        scenario.modems.append(second)
        try SimulatedDevice.with(scenario, connect: false) { device in
            let daemonLog = RunDirectory(prefix: device.prefix).logFile
            let result = try device.cellpath([
                "subscriber-check", "+447940448591", "-m", "all", "--direct", "--repeat", "2", "--json"
            ])
            // Modem 1's SIM holds another number: its runs are not verified, the worst verdict (exit 1).
            #expect(result.status == 1, "\(result.stderr)")
            let runs = try result.stdout.split(separator: "\n").prefix(4).map { try JSONValue.parse(String($0)) }
            #expect(
                runs.allSatisfy { $0["error"] == .null && $0["outcome"]?.string != nil },
                "every run reached a verdict: \(runs)")
            for modem in [0, 1] {
                let lane = runs.filter { $0["modem"] == .int(modem) }.sorted {
                    ($0["run"]?.int ?? 0) < ($1["run"]?.int ?? 0)
                }
                try #require(lane.count == 2, "\(runs)")
                let sources = lane.map {
                    Set(($0["check_url"]?["hops"]?.array ?? []).compactMap { $0["dns_source"]?.string })
                }
                #expect(sources == [["network", "chain"], ["bearer-cache", "chain"]], "modem \(modem): \(lane)")
                let address = try #require(lane[0]["path"]?["ipv4_address"]?.string)
                for host in Self.hostsAsked(lane[0]["check_url"]?["hops"]?.array ?? []) {
                    #expect(try Self.queries(for: host, from: address, in: daemonLog) == 1, "modem \(modem), \(host)")
                }
            }
        }
    }

    /// The host of a hop's URL.
    static func host(of hop: JSONValue) -> String? {
        guard let url = hop["url"]?.string, url.hasPrefix("http://") || url.hasPrefix("https://") else { return nil }
        return String(url.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" && $0 != ":" && $0 != "?" })
    }

    /// The hosts whose names a run's hops resolved.
    static func hostsAsked(_ hops: [JSONValue]) -> Set<String> {
        Set(hops.filter { $0["dns_answers"] != nil }.compactMap(host(of:)))
    }

    /// The A queries for `host` from `source` in the daemon log (dnsmasq's query log).
    static func queries(for host: String, from source: String, in log: String) throws -> Int {
        let text = String(decoding: try FileSystem.read(log, limit: 1 << 24), as: UTF8.self)
        return text.split(separator: "\n").filter { $0.contains("query[A] \(host) from \(source)") }.count
    }
}
