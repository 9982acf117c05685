import CellpathCore
import FoundationEssentials
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// IPv6 in the simulated world, driven with plain tools from the device namespace: addresses
/// and routes of both families, the relay's per-family checks and counters, AAAA answers,
/// the API and the identification endpoint on IPv6, and a quiet kernel on wlan0 and wwanN. Root only.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct IPv6WorldTests {
    /// Modem 0 on a dual-stack network, modem 1 on an IPv6-only one.
    static var scenario: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems[0].ipType = .ipv4v6
        var second = SimulatedModem(index: 1)
        second.ipType = .ipv6
        scenario.modems.append(second)
        return scenario
    }

    private func run(_ ns: String, _ arguments: [String]) throws -> ProcessResult {
        try WorldFixture.output(["ip", "netns", "exec", ns] + arguments)
    }

    /// `ip -n NS ARGS…` output, one line per entry with single spaces.
    private func ip(_ ns: String, _ arguments: String...) throws -> [String] {
        let result = try WorldFixture.output(["ip", "-n", ns] + arguments)
        #expect(result.status == 0, "ip -n \(ns) \(arguments): \(result.stderr)")
        return result.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
    }

    /// IPv6 addresses with prefix length on `device` in `ns`.
    private func ipv6Addresses(_ ns: String, _ device: String) throws -> [String] {
        try ip(ns, "-o", "-6", "addr", "show", "dev", device).compactMap { line in
            let fields = line.split(separator: " ")
            return fields.firstIndex(of: "inet6").map { String(fields[$0 + 1]) }
        }
    }

    /// curl in the device namespace with the world's CA; returns the result.
    private func curl(_ prefix: String, _ arguments: [String]) throws -> ProcessResult {
        try Curl.onDevice(of: prefix, arguments)
    }

    private func credentials(_ prefix: String) throws -> String {
        let env = Dictionary(
            uniqueKeysWithValues: try SimulatedWorld.environment(prefix: prefix).map { ($0.name, $0.value) })
        return "\(try #require(env["CELLPATH_CLIENT_ID"])):\(try #require(env["CELLPATH_CLIENT_SECRET"]))"
    }

    /// Asks `server` for `name`'s records of `type` (1 = A, 28 = AAAA) from a UDP socket bound
    /// to `device` in the device namespace; returns the addresses answered.
    private func query(_ prefix: String, device: String, server: String, name: String, type: Int) throws -> [String] {
        let result = try run(prefix + "ue", ["python3", "-c", Self.dnsQuery, device, server, name, "\(type)"])
        #expect(result.status == 0, "DNS query \(name) to \(server): \(result.stderr)")
        return result.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    }

    /// Sends one UDP datagram from `source` on `device` (SO_BINDTODEVICE) to `destination`:9.
    private func sendDatagram(_ prefix: String, device: String, source: String, destination: String) throws {
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_INET6 if ':' in sys.argv[3] else socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, 25, sys.argv[1].encode())
            s.bind((sys.argv[2], 0))
            s.sendto(b'x', (sys.argv[3], 9))
            """
        let result = try run(prefix + "ue", ["python3", "-c", script, device, source, destination])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Whether process `pid` is gone, or a zombie (once its parent, the daemon, is gone, this
    /// machine's init may not reap it at once).
    static func hasEnded(_ pid: Int32) -> Bool {
        let state = FileSystem.readText("/proc/\(pid)/stat").flatMap {
            $0.split(separator: ")").last?.split(separator: " ").first
        }
        return state == nil || state == "Z"
    }

    /// A minimal DNS client: argv device, server, name, qtype; prints the A/AAAA answers.
    static let dnsQuery = """
        import socket, struct, sys
        dev, server, name, qtype = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
        s = socket.socket(socket.AF_INET6 if ':' in server else socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, 25, dev.encode())
        s.settimeout(3)
        q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0)
        q += b''.join(bytes([len(p)]) + p.encode() for p in name.split('.')) + b'\\0' + struct.pack('>HH', qtype, 1)
        s.sendto(q, (server, 53))
        r = s.recv(4096)
        i, out = len(q), []
        for _ in range(struct.unpack('>H', r[6:8])[0]):
            while True:
                l = r[i]
                if l >= 0xc0: i += 2; break
                if l == 0: i += 1; break
                i += l + 1
            t, c, ttl, n = struct.unpack('>HHIH', r[i:i + 10]); i += 10
            if t in (1, 28): out.append(socket.inet_ntop(socket.AF_INET6 if t == 28 else socket.AF_INET, r[i:i + n]))
            i += n
        print(' '.join(out))
        """

    @Test func bothFamiliesHaveTheDocumentedAddressesAndRoutesAndTheKernelStaysQuiet() throws {
        try WorldFixture.withWorld(scenario: Self.scenario) { prefix in
            let ue = prefix + "ue", carrier = prefix + "carrier", inet = prefix + "inet"
            // No link-local address anywhere on the device: nothing for the kernel to announce.
            #expect(try ipv6Addresses(ue, "wlan0") == ["2001:db8:2::23/64"])
            #expect(
                try ip(ue, "-6", "route", "show").contains("default via 2001:db8:2::1 dev wlan0 metric 600 pref medium")
            )
            #expect(
                try ipv6Addresses(carrier, "lo").sorted() == ["2001:db8:64::1/128", "2001:db8:64::53/128", "::1/128"])
            #expect(try ipv6Addresses(carrier, "inet0").filter { !$0.hasPrefix("fe80:") } == ["2001:db8:100::1/64"])
            let carrierRoutes = try ip(carrier, "-6", "route", "show")
            for expected in [
                "2001:db8:64:10::/64 dev radio0 metric 1024 pref medium",
                "2001:db8:64:11::/64 dev radio1 metric 1024 pref medium",
                "2001:db8:2::/64 via 2001:db8:100::2 dev inet0 metric 1024 pref medium"
            ] {
                #expect(carrierRoutes.contains(expected), "\(carrierRoutes)")
            }
            #expect(try ipv6Addresses(inet, "lo").contains("2001:db8:113::10/128"))
            #expect(try ipv6Addresses(inet, "wifi0") == ["2001:db8:2::1/64"])
            #expect(
                try ip(inet, "-6", "route", "show").contains(
                    "2001:db8:64::/48 via 2001:db8:100::1 dev carrier0 metric 1024 pref medium"))

            let status = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let modem = status.modems[0]
            #expect(modem.ipType == "ipv4v6" && modem.address == "100.64.23.10")
            #expect(modem.ipv6Address == "2001:db8:64:10::2" && modem.ipv6Prefix == "2001:db8:64:10::/64")
            #expect(try ipv6Addresses(ue, "wwan0") == ["2001:db8:64:10::2/64"])
            #expect(try ip(ue, "-6", "route", "get", "2001:db8:113::10").joined().contains("dev wlan0"))
            #expect(
                try ip(ue, "-6", "route", "get", "2001:db8:113::10", "from", "2001:db8:64:10::2").joined().contains(
                    "dev wwan0"))
            // No router solicitation, MLD report or DAD probe on Wi-Fi or into the bearer's TUN.
            usleep(1_500_000)
            let quiet = try SimulatedWorld.status(prefix: prefix)
            #expect(quiet.wifi == LinkCounters(), "\(String(describing: quiet.wifi))")
            #expect(quiet.modems[0].counters == LinkCounters(), "\(quiet.modems[0].counters)")
            _ = try SimulatedWorld.bearer(connect: false, modem: 0, prefix: prefix)
            #expect(try !ip(ue, "-6", "rule", "show").joined().contains("2001:db8:64:10::/64"))
        }
    }

    @Test func anIPv6OnlyBearerIsIdentifiedReachesTheAPIAndCarriesNoIPv4() throws {
        try WorldFixture.withWorld(scenario: Self.scenario) { prefix in
            let status = try SimulatedWorld.bearer(connect: true, modem: 1, prefix: prefix)
            #expect(status.modems[1].ipType == "ipv6" && status.modems[1].address == nil)
            #expect(status.modems[1].ipv6Address == "2001:db8:64:11::2")
            // The carrier DNS answers AAAA over IPv6 through the bearer.
            #expect(
                try query(prefix, device: "wwan1", server: "2001:db8:64::53", name: "mno.carrier.test", type: 28) == [
                    "2001:db8:64::1"
                ])
            #expect(
                try query(prefix, device: "wwan1", server: "2001:db8:64::53", name: "api.truid.test", type: 28) == [
                    "2001:db8:113::10"
                ])
            #expect(
                try query(prefix, device: "wwan1", server: "2001:db8:64::53", name: "api.truid.test", type: 1) == [
                    "203.0.113.10"
                ])

            // The identification endpoint knows the SIM by its IPv6 bearer address.
            let identified = try curl(
                prefix,
                [
                    "-6", "--interface", "wwan1", "-o", "/dev/null", "-w", "%{redirect_url}",
                    "http://[2001:db8:64::1]/v1/identify/chk_1?return=https://api.truid.test/back"
                ])
            #expect(identified.status == 0, "\(identified.stderr)")
            #expect(identified.stdout.hasPrefix("https://api.truid.test/back?assertion="), "\(identified.stdout)")
            // The API over IPv6 through the bearer.
            let token = try curl(
                prefix,
                [
                    "-6", "--interface", "wwan1", "--resolve", "api.truid.test:443:[2001:db8:113::10]",
                    "-u", try credentials(prefix), "-d", "grant_type=client_credentials&scope=subscriber_check",
                    "https://api.truid.test/oauth2/v1/token"
                ])
            #expect(token.status == 0 && token.stdout.contains("access_token"), "\(token.stderr)")
            let log = try SimulatedWorld.requestLog(prefix: prefix)
            #expect(
                log.contains { $0.contains(#""source":"2001:db8:64:11::2""#) && $0.contains(prefix + "carrier") },
                "\(log)")
            #expect(log.contains { $0.contains(#""source":"2001:db8:64:11::2""#) && $0.contains("oauth2") }, "\(log)")

            // Per family: IPv4 is not granted on this bearer, and a foreign IPv6 source is refused.
            _ = try ip(prefix + "ue", "addr", "add", "100.64.23.11/32", "dev", "wwan1")
            try sendDatagram(prefix, device: "wwan1", source: "100.64.23.11", destination: "203.0.113.10")
            try sendDatagram(prefix, device: "wwan1", source: "2001:db8:2::23", destination: "2001:db8:113::10")
            var counters = try SimulatedWorld.status(prefix: prefix).modems[1].counters
            try Poll.until(timeout: .seconds(5)) {
                counters = try SimulatedWorld.status(prefix: prefix).modems[1].counters
                return counters.uplink.dropped["ipv4NotGranted"] != nil && counters.uplink.dropped["wrongSource"] != nil
            }
            #expect(counters.uplink.dropped["ipv4NotGranted"] == 1, "\(counters)")
            #expect(counters.uplink.dropped["wrongSource"] == 1, "\(counters)")
            #expect(counters.uplink.ipv6Packets > 0 && counters.uplink.ipv4Packets == 0, "\(counters)")
            #expect(counters.downlink.ipv6Packets > 0 && counters.downlink.ipv4Packets == 0, "\(counters)")
        }
    }

    @Test func ipv6OverWiFiReachesTheAPISoThatALeakIsVisible() throws {
        try WorldFixture.withWorld(scenario: Self.scenario) { prefix in
            #expect(
                try query(prefix, device: "wlan0", server: "2001:db8:2::1", name: "api.truid.test", type: 28) == [
                    "2001:db8:113::10"
                ])
            #expect(
                try query(prefix, device: "wlan0", server: "2001:db8:2::1", name: "mno.carrier.test", type: 28).isEmpty)
            // The device's own resolver (Wi-Fi DNS) gives the AAAA, and -6 takes the Wi-Fi default route.
            let token = try curl(
                prefix,
                [
                    "-6", "-u", try credentials(prefix), "-d", "grant_type=client_credentials&scope=subscriber_check",
                    "https://api.truid.test/oauth2/v1/token"
                ])
            #expect(token.status == 0 && token.stdout.contains("access_token"), "\(token.stderr)")
            let log = try SimulatedWorld.requestLog(prefix: prefix)
            #expect(log.contains { $0.contains(#""source":"2001:db8:2::23""#) && $0.contains("oauth2") }, "\(log)")
            let wifi = try #require(try SimulatedWorld.status(prefix: prefix).wifi)
            #expect(wifi.uplink.ipv6Packets > 0 && wifi.downlink.ipv6Packets > 0, "\(wifi)")
        }
    }

    @Test func aNAT64CarrierTranslatesToTheIPv4OnlyAPIAndStillIdentifiesTheSIM() throws {
        var scenario = Scenario.builtIn
        scenario.modems[0].ipType = .ipv6
        scenario.modems[0].nat64 = true
        scenario.modems.append(SimulatedModem(index: 1))  // an IPv4 modem shares the world
        var pids: [Int32] = []
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            let status = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let services = Dictionary(uniqueKeysWithValues: status.services.map { ($0.name, $0) })
            #expect(services["nat64"]?.running == true && services["dns64"]?.running == true, "\(status.services)")
            pids = [services["nat64"]?.pid, services["dns64"]?.pid].compactMap { $0 }
            // The API is an IPv4-only host: no AAAA anywhere, no IPv6 address; DNS64 synthesises one.
            #expect(try !ipv6Addresses(prefix + "inet", "lo").contains("2001:db8:113::10/128"))
            #expect(
                try query(prefix, device: "wlan0", server: "2001:db8:2::1", name: "api.truid.test", type: 28).isEmpty)
            let synthesised = try query(
                prefix, device: "wwan0", server: "2001:db8:64::53", name: "api.truid.test", type: 28)
            #expect(synthesised == ["2001:db8:64:ff9b::cb00:710a"])
            // A name with an AAAA of its own keeps it.
            #expect(
                try query(prefix, device: "wwan0", server: "2001:db8:64::53", name: "mno.carrier.test", type: 28) == [
                    "2001:db8:64::1"
                ])

            let token = try curl(
                prefix,
                [
                    "-6", "--interface", "wwan0", "--resolve", "api.truid.test:443:[\(synthesised.first ?? "")]",
                    "-u", try credentials(prefix), "-d", "grant_type=client_credentials&scope=subscriber_check",
                    "https://api.truid.test/oauth2/v1/token"
                ])
            #expect(token.status == 0 && token.stdout.contains("access_token"), "\(token.stderr)")
            let identified = try curl(
                prefix,
                [
                    "-6", "--interface", "wwan0", "-o", "/dev/null", "-w", "%{redirect_url}",
                    "http://[2001:db8:64::1]/v1/identify/chk_2?return=https://api.truid.test/back"
                ])
            #expect(
                identified.stdout.hasPrefix("https://api.truid.test/back?assertion="),
                "\(identified.stdout) \(identified.stderr)")
            // A SubscriberCheck's check_url through NAT64: the API takes the bearer's fixed egress
            // address for the operator's mobile IP, the carrier identifies the SIM by its IPv6 address.
            let bearer = try #require(
                token.stdout.split(separator: "\"").drop { $0 != "access_token" }.dropFirst(2).first.map(String.init))
            let created = try curl(
                prefix,
                [
                    "-4", "-H", "Authorization: Bearer \(bearer)", "-H", "Content-Type: application/json",
                    "-d", #"{"phone_number":"+447940448591"}"#, "https://api.truid.test/subscriber_check/v0.2/checks"
                ])
            let checkURL = try #require(
                created.stdout.components(separatedBy: #""check_url":{"href":""#).dropFirst().first?
                    .split(separator: "\"").first.map(String.init), "\(created.stdout)")
            let chain = try curl(
                prefix,
                [
                    "-6", "-L", "--interface", "wwan0", "--resolve", "api.truid.test:443:[\(synthesised.first ?? "")]",
                    "--resolve", "mno.carrier.test:80:[2001:db8:64::1]", checkURL
                ])
            #expect(chain.status == 0 && chain.stdout.contains(#""code":"#), "\(chain.stdout) \(chain.stderr)")
            let log = try SimulatedWorld.requestLog(prefix: prefix)
            // The API sees the NAT64 egress address of modem 0; the carrier sees the bearer's own IPv6 address.
            #expect(log.contains { $0.contains(#""source":"100.64.96.10""#) && $0.contains("oauth2") }, "\(log)")
            #expect(
                log.contains {
                    $0.contains(#""source":"100.64.96.10""#) && $0.contains("/callback")
                        && $0.contains(#""status":200"#)
                }, "\(log)")
            #expect(
                log.contains { $0.contains(#""source":"2001:db8:64:10::2""#) && $0.contains("/v1/identify/chk_2") },
                "\(log)")
            #expect(!log.contains { $0.contains(#""source":"2001:db8:64:10::2""#) && $0.contains("oauth2") })
        }
        // `sim down` (the daemon) stopped tayga and unbound.
        #expect(pids.count == 2)
        for pid in pids { #expect(Self.hasEnded(pid), "pid \(pid) still runs") }
    }

    @Test func downAfterAKilledDaemonStopsTaygaAndUnbound() throws {
        var scenario = Scenario.builtIn
        scenario.modems[0].ipType = .ipv6
        scenario.modems[0].nat64 = true
        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }
        let status = try WorldFixture.up(prefix: prefix, scenario: scenario)
        let pids = status.services.filter { ["nat64", "dns64"].contains($0.name) }.compactMap(\.pid)
        #expect(pids.count == 2, "\(status.services)")
        let daemon = try #require(status.daemonPID)
        kill(daemon, SIGKILL)
        var reaped: Int32 = 0
        _ = waitpid(daemon, &reaped, 0)
        let report = try SimulatedWorld.down(prefix: prefix)
        for pid in pids {
            #expect(
                report.stoppedProcesses.contains { $0.pid == pid && $0.reason == "in \(prefix)carrier" },
                "\(report.stoppedProcesses)")
            #expect(Self.hasEnded(pid), "pid \(pid) still runs")
        }
        #expect(!FileSystem.exists(RunDirectory(prefix: prefix).path))
    }

    @Test func aBearerConnectedByMbimcliOpensTheDataPathForTheGrantedFamilyOnly() throws {
        try WorldFixture.withWorld(scenario: Self.scenario) { prefix in
            let port = try SimulatedWorld.status(prefix: prefix).modems[1].controlPort
            // Asking for both on the IPv6-only network: IPv6 is granted; the host configures wwan1 itself.
            let connect = try WorldFixture.output([
                "mbimcli", "-d", port, "--connect=access-string=internet,ip-type=ipv4v6", "--no-close"
            ])
            #expect(connect.status == 0, "\(connect.stderr)")
            let modem = try SimulatedWorld.status(prefix: prefix).modems[1]
            #expect(
                modem.bearer == .connected && modem.ipType == "ipv6" && modem.ipv6Address == "2001:db8:64:11::2",
                "\(modem)")
            _ = try ip(prefix + "ue", "-6", "addr", "add", "2001:db8:64:11::2/64", "dev", "wwan1")
            _ = try ip(prefix + "ue", "link", "set", "wwan1", "up")
            _ = try ip(prefix + "ue", "-6", "route", "add", "default", "dev", "wwan1", "metric", "701")
            let identified = try curl(
                prefix,
                [
                    "-6", "--interface", "wwan1", "-o", "/dev/null", "-w", "%{redirect_url}",
                    "http://[2001:db8:64::1]/v1/identify/chk_3?return=https://api.truid.test/back"
                ])
            #expect(
                identified.stdout.hasPrefix("https://api.truid.test/back?assertion="),
                "\(identified.stdout) \(identified.stderr)")
            // Another address of the /64 is the same subscriber's device (it picks its own interface id).
            _ = try ip(prefix + "ue", "-6", "addr", "add", "2001:db8:64:11::abcd/64", "dev", "wwan1")
            let script = """
                import socket, sys
                s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, 25, b'wwan1')
                s.bind(('2001:db8:64:11::abcd', 0))
                s.settimeout(5)
                s.connect(('2001:db8:64::1', 80))
                s.sendall(b'GET /v1/identify/chk_4?return=https://api.truid.test/back HTTP/1.1\\r\\nHost: mno.carrier.test\\r\\nConnection: close\\r\\n\\r\\n')
                print(s.recv(4096).decode(errors='replace'))
                """
            let other = try run(prefix + "ue", ["python3", "-c", script])
            #expect(
                other.stdout.contains("Location: https://api.truid.test/back?assertion="),
                "\(other.stdout) \(other.stderr)")
            let log = try SimulatedWorld.requestLog(prefix: prefix)
            #expect(log.contains { $0.contains(#""source":"2001:db8:64:11::abcd""#) && $0.contains("chk_4") }, "\(log)")
        }
    }

    @Test func qmiDualStackIsTwoSessionsOnOneDataPath() throws {
        var scenario = Scenario.builtIn
        scenario.modems[0].protocol = .qmi
        scenario.modems[0].ipType = .ipv4v6
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            let port = try SimulatedWorld.status(prefix: prefix).modems[0].controlPort
            func qmicli(_ arguments: String...) throws -> ProcessResult {
                let result = try WorldFixture.output(["qmicli", "-d", port, "--device-open-qmi"] + arguments)
                #expect(result.status == 0, "qmicli \(arguments): \(result.stderr)")
                return result
            }
            _ = try qmicli("--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid")
            #expect(try SimulatedWorld.status(prefix: prefix).modems[0].ipType == "ipv4")
            let v6 = try qmicli("--wds-start-network=apn=internet,ip-type=6", "--client-no-release-cid")
            let both = try SimulatedWorld.status(prefix: prefix).modems[0]
            #expect(
                both.ipType == "ipv4v6" && both.address == "100.64.23.10" && both.ipv6Address == "2001:db8:64:10::2",
                "\(both)")
            // Ending the IPv6 session narrows the data path to IPv4: IPv6 packets are dropped again.
            let handle = try #require(v6.stdout.split(separator: "'").dropFirst().first.map(String.init))
            let cid = try #require(
                v6.stdout.split(separator: "\n").first { $0.contains("CID") }?.split(separator: "'").dropFirst().first)
            _ = try qmicli("--wds-stop-network=\(handle)", "--client-cid=\(cid)")
            #expect(try SimulatedWorld.status(prefix: prefix).modems[0].ipType == "ipv4")
            _ = try ip(prefix + "ue", "-6", "addr", "add", "2001:db8:64:10::2/64", "dev", "wwan0")
            _ = try ip(prefix + "ue", "link", "set", "wwan0", "up")
            _ = try ip(prefix + "ue", "-6", "route", "add", "default", "dev", "wwan0", "metric", "700")
            try sendDatagram(prefix, device: "wwan0", source: "2001:db8:64:10::2", destination: "2001:db8:113::10")
            try Poll.until(timeout: .seconds(5)) {
                try SimulatedWorld.status(prefix: prefix).modems[0].counters.uplink.dropped["ipv6NotGranted"] != nil
            }
            #expect(try SimulatedWorld.status(prefix: prefix).modems[0].counters.uplink.dropped["ipv6NotGranted"] == 1)
        }
    }

    /// Sends a router solicitation out of `device` and prints the first router advertisement's
    /// source and each prefix information option: prefix, length, flags, valid and preferred lifetimes.
    static let solicitRouter = """
        import socket, struct, sys
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        s.setsockopt(socket.SOL_SOCKET, 25, sys.argv[1].encode())
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
        s.settimeout(5)
        s.sendto(bytes([133, 0, 0, 0, 0, 0, 0, 0]), ('ff02::2', 0, 0, socket.if_nametoindex(sys.argv[1])))
        data, source = s.recvfrom(1500)
        while data[0] != 134:
            data, source = s.recvfrom(1500)
        i = 16
        while i + 2 <= len(data) and data[i + 1]:
            if data[i] == 3:
                valid, preferred = struct.unpack('>II', data[i + 4:i + 12])
                prefix = socket.inet_ntop(socket.AF_INET6, data[i + 16:i + 32])
                print(source[0].split('%')[0], prefix, data[i + 2], hex(data[i + 3]), valid, preferred)
            i += data[i + 1] * 8
        """

    @Test func aT7xxBearersGatewayAnswersRouterSolicitationsWithTheBearersPrefix() throws {
        var scenario = Scenario.builtIn
        scenario.modems[0].device = .pcieT7xx
        scenario.modems[0].ipType = .ipv4v6
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let result = try run(prefix + "ue", ["python3", "-c", Self.solicitRouter, "wwan0"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "fe80::1 2001:db8:64:10:: 64 0x40 86400 14400\n", "\(result.stdout)")
        }
    }
}
