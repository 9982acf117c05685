import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// The simulated world end to end: topology, data path, DNS, TLS, lifecycle. Root only.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct WorldTests {
    /// `ip -n NS ARGS…` output.
    private func ip(_ ns: String, _ arguments: String...) throws -> String {
        let result = try WorldFixture.output(["ip", "-n", ns] + arguments)
        #expect(result.status == 0, "ip -n \(ns) \(arguments): \(result.stderr)")
        return result.stdout
    }

    /// IPv4 addresses with prefix length on `device` in `ns`.
    private func addresses(_ ns: String, _ device: String) throws -> [String] {
        try ip(ns, "-o", "-4", "addr", "show", "dev", device).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.firstIndex(of: "inet").map { String(fields[$0 + 1]) }
        }
    }

    private func routes(_ ns: String) throws -> [String] {
        try ip(ns, "-4", "route", "show").split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
    }

    @Test func topologyHasTheDocumentedAddressesAndRoutes() throws {
        var scenario = Scenario.builtIn
        scenario.modems.append(SimulatedModem(index: 1))
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            let ue = prefix + "ue", carrier = prefix + "carrier", inet = prefix + "inet"
            #expect(try addresses(ue, "wlan0") == ["192.0.2.23/24"])
            #expect(try addresses(ue, "wwan0").isEmpty)
            #expect(try addresses(ue, "wwan1").isEmpty)
            #expect(try routes(ue).contains("default via 192.0.2.1 dev wlan0 metric 600"))
            let wwan = try ip(ue, "link", "show", "wwan0")
            #expect(wwan.contains("POINTOPOINT") && wwan.contains("NOARP") && wwan.contains("link/none"))
            #expect(try addresses(carrier, "lo").sorted() == ["100.64.0.1/32", "100.64.0.53/32", "127.0.0.1/8"])
            #expect(try addresses(carrier, "inet0") == ["198.51.100.1/30"])
            let carrierRoutes = try routes(carrier)
            for expected in [
                "100.64.23.10 dev radio0 scope link", "100.64.23.11 dev radio1 scope link",
                "192.0.2.0/24 via 198.51.100.2 dev inet0", "203.0.113.0/24 via 198.51.100.2 dev inet0"
            ] {
                #expect(carrierRoutes.contains(expected), "\(carrierRoutes)")
            }
            #expect(try addresses(inet, "lo").contains("203.0.113.10/32"))
            #expect(try addresses(inet, "wifi0") == ["192.0.2.1/24"])
            #expect(try addresses(inet, "carrier0") == ["198.51.100.2/30"])
            #expect(try routes(inet).contains("100.64.0.0/16 via 198.51.100.1 dev carrier0"))

            let status = try SimulatedWorld.bearer(connect: true, modem: 1, prefix: prefix)
            #expect(status.modems[1].bearer == .connected && status.modems[1].address == "100.64.23.11")
            #expect(status.modems[0].bearer == .disconnected)
            #expect(try addresses(ue, "wwan1") == ["100.64.23.11/32"])
            #expect(try routes(ue).contains("default dev wwan1 scope link metric 701"))
            // Wi-Fi keeps the better default route; what comes from the bearer address (the
            // kernel's own resets included) follows the bearer.
            #expect(try ip(ue, "route", "get", "203.0.113.10").contains("dev wlan0"))
            #expect(try ip(ue, "route", "get", "203.0.113.10", "from", "100.64.23.11").contains("dev wwan1"))
            _ = try SimulatedWorld.bearer(connect: false, modem: 1, prefix: prefix)
            #expect(try !ip(ue, "rule", "show").contains("100.64.23.11"))
        }
    }

    @Test func unboundTrafficLeavesThroughWiFiAndBoundTrafficThroughTheBearer() throws {
        try WorldFixture.withWorld { prefix in
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let server = try NamespaceSocket(namespace: prefix + "inet")
            try server.bind("203.0.113.10")
            let before = try SimulatedWorld.status(prefix: prefix)

            let unbound = try NamespaceSocket(namespace: prefix + "ue")
            #expect(unbound.send(Array("wifi".utf8), to: "203.0.113.10", port: server.port))
            let viaWiFi = try #require(server.receive(timeoutMs: 2000))
            #expect(viaWiFi.address == "192.0.2.23")

            let bound = try NamespaceSocket(namespace: prefix + "ue")
            try bound.bindToDevice("wwan0")
            #expect(bound.send(Array("cell".utf8), to: "203.0.113.10", port: server.port))
            let viaCell = try #require(server.receive(timeoutMs: 2000))
            #expect(viaCell.address == "100.64.23.10")
            #expect(String(decoding: viaCell.bytes, as: UTF8.self) == "cell")
            // The reply comes back through the carrier and the relay.
            #expect(server.send(Array("back".utf8), to: viaCell.address, port: viaCell.port))
            #expect(bound.receive(timeoutMs: 2000).map { String(decoding: $0.bytes, as: UTF8.self) } == "back")

            let after = try SimulatedWorld.status(prefix: prefix)
            let cell = after.modems[0].counters, cellBefore = before.modems[0].counters
            #expect(cell.uplink.relayedPackets == cellBefore.uplink.relayedPackets + 1)
            #expect(cell.downlink.relayedPackets == cellBefore.downlink.relayedPackets + 1)
            #expect((after.wifi?.uplink.relayedPackets ?? 0) > (before.wifi?.uplink.relayedPackets ?? 0))

            // A packet on wwan0 with a source the carrier did not assign is dropped (PGW check).
            let spoofed = try NamespaceSocket(namespace: prefix + "ue")
            try spoofed.bind("192.0.2.23")
            try spoofed.bindToDevice("wwan0")
            #expect(spoofed.send(Array("spoof".utf8), to: "203.0.113.10", port: server.port))
            #expect(server.receive(timeoutMs: 500) == nil)
            let dropped = try SimulatedWorld.status(prefix: prefix).modems[0].counters.uplink.dropped["wrongSource"]
            #expect(dropped == 1)
        }
    }

    @Test func theRelayAddsTheConfiguredDelay() throws {
        var scenario = Scenario.builtIn
        scenario.cellularPath = LinkConditions(delayMs: 40)
        scenario.wifiPath = LinkConditions(delayMs: 5)
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let server = try NamespaceSocket(namespace: prefix + "inet")
            try server.bind("203.0.113.10")
            /// Median round trip of 5 echoes from `client`, in ms.
            func rtt(_ client: NamespaceSocket) throws -> Double {
                var samples: [Double] = []
                for i in 0 ..< 5 {
                    let start = nowMs()
                    #expect(client.send([UInt8(i)], to: "203.0.113.10", port: server.port))
                    let request = try #require(server.receive(timeoutMs: 2000))
                    #expect(server.send(request.bytes, to: request.address, port: request.port))
                    _ = try #require(client.receive(timeoutMs: 2000))
                    samples.append(nowMs() - start)
                }
                return samples.sorted()[2]
            }
            let cell = try NamespaceSocket(namespace: prefix + "ue")
            try cell.bindToDevice("wwan0")
            let cellular = try rtt(cell)
            #expect(cellular >= 79 && cellular < 130, "cellular RTT \(cellular) ms, expected ≈ 80")
            let wifi = try rtt(try NamespaceSocket(namespace: prefix + "ue"))
            #expect(wifi >= 9.5 && wifi < 60, "Wi-Fi RTT \(wifi) ms, expected ≈ 10")
        }
    }

    @Test func eachDirectionHasItsOwnDelayAndLoss() throws {
        var scenario = Scenario.builtIn
        scenario.cellularPath = LinkConditions(
            delayMs: 0, uplink: DirectionOverride(delayMs: 60),
            downlink: DirectionOverride(lossPercent: 100))
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let server = try NamespaceSocket(namespace: prefix + "inet")
            try server.bind("203.0.113.10")
            let client = try NamespaceSocket(namespace: prefix + "ue")
            try client.bindToDevice("wwan0")
            let start = nowMs()
            #expect(client.send([1], to: "203.0.113.10", port: server.port))
            let request = try #require(server.receive(timeoutMs: 2000))
            let oneWay = nowMs() - start
            #expect(oneWay >= 59 && oneWay < 110, "uplink one-way \(oneWay) ms, expected ≈ 60")
            #expect(server.send([2], to: request.address, port: request.port))
            #expect(client.receive(timeoutMs: 500) == nil)
            let counters = try SimulatedWorld.status(prefix: prefix).modems[0].counters
            #expect(counters.downlink.dropped["loss"] == 1)
            #expect(counters.uplink.relayedPackets == 1)
        }
    }

    @Test func jitterSpreadsTheDelayWithoutReordering() throws {
        var scenario = Scenario.builtIn
        scenario.cellularPath = LinkConditions(delayMs: 0, uplink: DirectionOverride(delayMs: 50, jitterMs: 30))
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let server = try NamespaceSocket(namespace: prefix + "inet")
            try server.bind("203.0.113.10")
            let client = try NamespaceSocket(namespace: prefix + "ue")
            try client.bindToDevice("wwan0")
            var oneWay: [Double] = []
            for i in 0 ..< 12 {
                let start = nowMs()
                #expect(client.send([UInt8(i)], to: "203.0.113.10", port: server.port))
                let received = try #require(server.receive(timeoutMs: 2000))
                #expect(received.bytes == [UInt8(i)])
                oneWay.append(nowMs() - start)
            }
            #expect(oneWay.allSatisfy { $0 >= 19 && $0 < 120 }, "\(oneWay)")
            #expect(oneWay.max()! - oneWay.min()! > 10, "no jitter in \(oneWay)")
            // A burst keeps its order even though each packet draws its own delay.
            for i in 0 ..< 20 { client.send([UInt8(i)], to: "203.0.113.10", port: server.port) }
            var order: [UInt8] = []
            while order.count < 20, let packet = server.receive(timeoutMs: 1000) { order += packet.bytes }
            #expect(order == (0 ..< 20).map { UInt8($0) })
        }
    }

    @Test func aDisconnectedBearerBlackholesBoundTraffic() throws {
        try WorldFixture.withWorld { prefix in
            let server = try NamespaceSocket(namespace: prefix + "inet")
            try server.bind("203.0.113.10")
            let client = try NamespaceSocket(namespace: prefix + "ue")
            try client.bindToDevice("wwan0")
            // Never connected: nothing goes out through wwan0, nothing leaks through wlan0.
            client.send([1], to: "203.0.113.10", port: server.port)
            #expect(server.receive(timeoutMs: 500) == nil)

            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            #expect(client.send([2], to: "203.0.113.10", port: server.port))
            let reached = try #require(server.receive(timeoutMs: 2000))
            #expect(reached.address == "100.64.23.10")

            let status = try SimulatedWorld.bearer(connect: false, modem: 0, prefix: prefix)
            #expect(status.modems[0].bearer == .disconnected && status.modems[0].address == nil)
            client.send([3], to: "203.0.113.10", port: server.port)
            #expect(server.receive(timeoutMs: 500) == nil)
            // Downlink towards the former bearer address is dropped by the carrier's relay.
            let dropsBefore = status.modems[0].counters.downlink.dropped["bearerDisconnected"] ?? 0
            #expect(server.send([4], to: "100.64.23.10", port: reached.port))
            var dropsAfter = dropsBefore
            try Poll.until(timeout: .seconds(5)) {
                let downlink = try SimulatedWorld.status(prefix: prefix).modems[0].counters.downlink
                dropsAfter = downlink.dropped["bearerDisconnected"] ?? 0
                return dropsAfter > dropsBefore
            }
            #expect(dropsAfter == dropsBefore + 1)
            #expect(client.receive(timeoutMs: 100) == nil)
        }
    }

    @Test func theSimulatedModemsBearerDrivesTheDataPath() throws {
        try WorldFixture.withWorld { prefix in
            let port = try SimulatedWorld.status(prefix: prefix).modems[0].controlPort
            let connect = try WorldFixture.output(["mbimcli", "-d", port, "--connect=apn=internet", "--no-close"])
            #expect(connect.status == 0, "\(connect.stderr)")
            #expect(connect.stdout.contains("100.64.23.10/32"))
            #expect(try SimulatedWorld.status(prefix: prefix).modems[0].bearer == .connected)
            // Apply the IP configuration as the modem layer does; then bound traffic flows.
            _ = try ip(prefix + "ue", "addr", "add", "100.64.23.10/32", "dev", "wwan0")
            _ = try ip(prefix + "ue", "link", "set", "wwan0", "up")
            let server = try NamespaceSocket(namespace: prefix + "inet")
            try server.bind("203.0.113.10")
            let client = try NamespaceSocket(namespace: prefix + "ue")
            try client.bindToDevice("wwan0")
            #expect(client.send([1], to: "203.0.113.10", port: server.port))
            #expect(server.receive(timeoutMs: 2000)?.address == "100.64.23.10")
            // A session without --no-close ends with CLOSE, which deactivates the context.
            let query = try WorldFixture.output(["mbimcli", "-d", port, "--query-device-caps"])
            #expect(query.status == 0, "\(query.stderr)")
            #expect(try SimulatedWorld.status(prefix: prefix).modems[0].bearer == .disconnected)
            #expect(client.send([2], to: "203.0.113.10", port: server.port))
            #expect(server.receive(timeoutMs: 500) == nil)
        }
    }

    @Test func dnsAnswersDependOnTheNetwork() throws {
        try WorldFixture.withWorld { prefix in
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let cell = try NamespaceSocket(namespace: prefix + "ue")
            try cell.bindToDevice("wwan0")
            let wifi = try NamespaceSocket(namespace: prefix + "ue")
            func ask(
                _ socket: NamespaceSocket, _ server: String, _ name: String
            ) throws -> (rcode: Int, address: String?) {
                #expect(socket.send(dnsQuery(name, id: 0x4242), to: server, port: 53))
                return dnsAnswer(try #require(socket.receive(timeoutMs: 2000)).bytes)
            }
            #expect(try ask(cell, "100.64.0.53", "mno.carrier.test") == (0, "100.64.0.1"))
            #expect(try ask(cell, "100.64.0.53", "api.truid.test") == (0, "203.0.113.10"))
            #expect(try ask(wifi, "192.0.2.1", "api.truid.test") == (0, "203.0.113.10"))
            #expect(try ask(wifi, "192.0.2.1", "mno.carrier.test") == (3, nil))
            // The carrier DNS is not reachable from Wi-Fi.
            #expect(wifi.send(dnsQuery("api.truid.test", id: 1), to: "100.64.0.53", port: 53))
            #expect(wifi.receive(timeoutMs: 500) == nil)
        }
    }

    @Test func theTestCAIsTrustedThroughSimExecEnvironment() throws {
        try WorldFixture.withWorld { prefix in
            let run = RunDirectory(prefix: prefix)
            let verify = try WorldFixture.output([
                "openssl", "verify", "-CAfile", run.caCertificate, run.serverCertificate
            ])
            #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
            let env = Dictionary(
                uniqueKeysWithValues: try SimulatedWorld.environment(prefix: prefix).map { ($0.name, $0.value) })
            #expect(env["CELLPATH_CA_FILE"] == run.caCertificate)
            #expect(env["CELLPATH_API_BASE"] == "https://api.truid.test")
            // A TLS server with the world's certificate on the API address; curl in the
            // device namespace resolves the name through Wi-Fi DNS and trusts the test CA.
            let server = try BackgroundProcess([
                "ip", "netns", "exec", prefix + "inet", "openssl", "s_server",
                "-accept", "203.0.113.10:4433", "-cert", run.serverCertificate,
                "-key", run.serverKey, "-www", "-quiet"
            ])
            defer { server.stop() }
            /// `cellpath sim exec -- COMMAND…` in this world: its exit status.
            func simExec(_ command: [String]) throws -> Int32 {
                try CellpathBinary.run(["sim", "exec", "--prefix", prefix, "--"] + command).status
            }
            var status: Int32 = -1
            try Poll.until(timeout: .seconds(5), interval: .milliseconds(100)) {
                status = try simExec([
                    "sh", "-c", "curl -sf -o /dev/null --cacert \"$CELLPATH_CA_FILE\" https://api.truid.test:4433/"
                ])
                return status == 0
            }
            #expect(status == 0)
            let untrusted = try simExec([
                "curl", "-s", "-o", "/dev/null", "--cacert", "/etc/ssl/certs/ca-certificates.crt",
                "https://api.truid.test:4433/"
            ])
            #expect(untrusted == 60)  // CURLE_PEER_FAILED_VERIFICATION
            // curl --interface wwan0 (SO_BINDTODEVICE) takes the cellular path once the bearer is up.
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let before = try SimulatedWorld.status(prefix: prefix).modems[0].counters.uplink.relayedPackets
            let cellular = try simExec([
                "curl", "-sf", "-o", "/dev/null", "--interface", "wwan0", "--cacert", run.caCertificate,
                "--resolve", "api.truid.test:4433:203.0.113.10", "https://api.truid.test:4433/"
            ])
            #expect(cellular == 0)
            let after = try SimulatedWorld.status(prefix: prefix).modems[0].counters.uplink.relayedPackets
            #expect(after >= before + 3)  // at least SYN, ACK, ClientHello
        }
    }

    @Test func upTwiceDownTwiceAndDownAfterKill() throws {
        let prefix = WorldFixture.uniquePrefix()
        let run = RunDirectory(prefix: prefix)
        let rootLinksBefore = try Set(
            WorldFixture.output(["ip", "-o", "link", "show"]).stdout.split(separator: "\n").map {
                $0.split(separator: ":")[1]
            })
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }

        let first = try WorldFixture.up(prefix: prefix)
        #expect(first.state == .up)
        let error = #expect(throws: CellpathError.self) { try WorldFixture.up(prefix: prefix) }
        #expect(error?.kind == .unavailable)
        let down = try SimulatedWorld.down(prefix: prefix)
        #expect(down.stoppedDaemon && !down.wasAlreadyDown)
        #expect(down.daemonPID == first.daemonPID)
        // The daemon deleted the namespaces itself; the report still names them.
        #expect(down.removedNamespaces == [prefix + "ue", prefix + "carrier", prefix + "inet"])
        #expect(down.removedRunDirectory)
        #expect(try SimulatedWorld.down(prefix: prefix).wasAlreadyDown)
        #expect(try SimulatedWorld.status(prefix: prefix).state == .down)

        let second = try WorldFixture.up(prefix: prefix)
        let daemon = try #require(second.daemonPID)
        let children = second.services.compactMap(\.pid)
        #expect(children.count == 2)
        kill(daemon, SIGKILL)
        var reaped: Int32 = 0
        _ = waitpid(daemon, &reaped, 0)
        // The TUN devices die with the daemon's descriptors.
        #expect(try WorldFixture.output(["ip", "-n", prefix + "ue", "link", "show", "wwan0"]).status != 0)
        #expect(try SimulatedWorld.status(prefix: prefix).state == .stale)
        let afterKill = try SimulatedWorld.down(prefix: prefix)
        #expect(!afterKill.stoppedDaemon)
        #expect(Set(afterKill.stoppedProcesses.map(\.pid)) == Set(children))
        #expect(
            afterKill.stoppedProcesses.allSatisfy {
                $0.name == "dnsmasq" && $0.reason.hasSuffix("DNS of a killed daemon")
            })
        #expect(afterKill.removedNamespaces.count == 3)

        // Nothing left: namespaces, processes, devices, files.
        let namespaces = try WorldFixture.output(["ip", "netns", "list"]).stdout
        #expect(!namespaces.contains(prefix))
        for pid in children + [daemon] { #expect(processIsGone(pid), "pid \(pid) still runs") }
        let rootLinksAfter = try Set(
            WorldFixture.output(["ip", "-o", "link", "show"]).stdout.split(separator: "\n").map {
                $0.split(separator: ":")[1]
            })
        #expect(rootLinksAfter.subtracting(rootLinksBefore).isEmpty)
        #expect(access(run.path, F_OK) != 0)
        #expect(access("/etc/netns/\(prefix)ue", F_OK) != 0)
        #expect(try SimulatedWorld.down(prefix: prefix).wasAlreadyDown)
    }
}

/// True when `pid` no longer runs a program (gone, or a zombie with an empty command line).
func processIsGone(_ pid: Int32) -> Bool {
    let fd = open("/proc/\(pid)/cmdline", O_RDONLY)
    guard fd >= 0 else { return true }
    defer { close(fd) }
    var byte: UInt8 = 0
    return read(fd, &byte, 1) <= 0
}
