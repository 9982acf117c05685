import SimulatorScenario
import Glibc
import Simulator
import Testing
import TestSupport

/// Issue 5 fail-closed matrix in the simulated world: when the cellular path is missing or goes
/// away, `cellpath fetch` fails with its own reason and exit code and sends nothing through Wi-Fi.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
struct FailClosedTests {
    @Test func bearerDisconnectedBeforeTheChain() throws {
        try SimulatedDevice.with { device in
            let check = try device.subscriberCheckURL()
            try device.bearer(connect: false)
            let logMark = try device.requestLog().count
            let (fetch, packets) = try device.capture(on: ["wlan0"]) { try device.fetch([check.url]) }
            #expect(fetch.status == 69)
            #expect(fetch.json["error"]?["kind"]?.string == "unavailable")
            #expect(fetch.json["error"]?["message"]?.string == "interface wwan0 has no address")
            #expect(packets["wlan0"] == [], "\(packets)")
            #expect(try device.requestLog().count == logMark)
        }
    }

    @Test func bearerDisconnectedWhileTheCarrierHopIsInFlight() throws {
        var scenario = Scenario.builtIn
        scenario.carrier.timeout = true
        try SimulatedDevice.with(scenario) { device in
            let check = try device.subscriberCheckURL()
            // The carrier never answers; the bearer goes away while the fetch waits for it.
            let disconnect = try BackgroundProcess(["sh", "-c", "sleep 1.5; exec \"$0\" sim bearer disconnect --prefix \"$1\"",
                                                    CellpathBinary.path, device.prefix])
            let (fetch, packets) = try device.capture(on: ["wlan0"]) { try device.fetch([check.url, "--hop-timeout", "4"]) }
            #expect(disconnect.wait(timeoutMs: 5000))
            #expect(fetch.status == 69, "\(fetch.stderr)")
            #expect(fetch.json.failureReason == "interfaceDown")
            #expect(fetch.json["failure"]?["hop"]?.int == 2)
            #expect(fetch.json.hops.first?["status"]?.int == 302)
            #expect(packets["wlan0"] == [], "\(packets)")
        }
    }

    @Test func bearerAddressRemovedWhileTheCarrierHopIsInFlight() throws {
        var scenario = Scenario.builtIn
        scenario.carrier.timeout = true
        try SimulatedDevice.with(scenario) { device in
            let check = try device.subscriberCheckURL()
            let remove = try BackgroundProcess(["sh", "-c", "sleep 1.5; exec ip -n \"$0\" addr del 100.64.23.10/32 dev wwan0", device.ue])
            let (fetch, packets) = try device.capture(on: ["wlan0"]) { try device.fetch([check.url, "--hop-timeout", "4"]) }
            #expect(remove.wait(timeoutMs: 5000))
            #expect(fetch.status == 69, "\(fetch.stderr)")
            #expect(fetch.json.failureReason == "addressGone")
            #expect(fetch.json["failure"]?["hop"]?.int == 2)
            #expect(packets["wlan0"] == [], "\(packets)")
        }
    }

    @Test func bearerDroppedByTheNetworkDuringTheChain() throws {
        // The modem (connected by mbimcli) loses its bearer mid-chain; the host still has wwan0
        // configured, so nothing tells the fetch but silence: it times out and sends nothing elsewhere.
        var scenario = Scenario.builtIn
        scenario.api.slowMs = 1500
        scenario.modems[0].faults.dropBearerAfterSeconds = 2
        try SimulatedDevice.with(scenario, connect: false) { device in
            let check = try device.subscriberCheckURL()   // over Wi-Fi, before the bearer exists
            let port = try #require(try device.status()["modems"]?.array?[0]["control_port"]?.string)
            let connect = try ProcessRunner.run(["mbimcli", "-d", port, "--connect=apn=internet", "--no-close"],
                                                environment: SimulatedDevice.path)
            #expect(connect.status == 0, "\(connect.stderr)")
            for arguments in [["addr", "add", "100.64.23.10/32", "dev", "wwan0"], ["link", "set", "wwan0", "up"],
                              ["route", "replace", "default", "dev", "wwan0", "metric", "700"]] {
                #expect(try ProcessRunner.run(["ip", "-n", device.ue] + arguments, environment: SimulatedDevice.path).status == 0)
            }
            func uplinkDrops() throws -> Int {
                try device.status()["modems"]?.array?[0]["counters"]?["uplink"]?["dropped"]?["bearer_disconnected"]?.int ?? 0
            }
            let dropsBefore = try uplinkDrops()
            let (fetch, packets) = try device.capture(on: ["wlan0"]) { try device.fetch([check.url, "--hop-timeout", "3"]) }
            #expect(fetch.status == 75, "\(fetch.stderr)")
            #expect(fetch.json.failureReason == "hopTimeout")
            #expect(fetch.json["result"]?.isNull ?? true)
            #expect(packets["wlan0"] == [], "\(packets)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            // What the device still sent into wwan0 after the drop was discarded by the modem.
            #expect(try uplinkDrops() > dropsBefore)
        }
    }

    @Test func carrierHopThatNeverAnswersIsAHopTimeout() throws {
        var scenario = Scenario.builtIn
        scenario.carrier.timeout = true
        try SimulatedDevice.with(scenario) { device in
            let check = try device.subscriberCheckURL()
            let started = nowMs()
            let (fetch, packets) = try device.capture(on: ["wlan0", "wwan0"]) { try device.fetch([check.url, "--hop-timeout", "2"]) }
            let elapsed = nowMs() - started
            #expect(fetch.status == 75, "\(fetch.stderr)")
            #expect(fetch.json.failureReason == "hopTimeout")
            #expect(fetch.json["failure"]?["hop"]?.int == 2)
            #expect(elapsed < 6000, "a 2 s hop timeout took \(elapsed) ms")
            #expect(packets["wlan0"] == [], "\(packets)")
            let carrier = try device.requestLog().filter { $0["namespace"]?.string == device.prefix + "carrier" }
            #expect(carrier.allSatisfy { $0["source"]?.string == "100.64.23.10" })
        }
    }

    @Test func carrierDNSUnreachable() throws {
        try SimulatedDevice.with { device in
            let check = try device.subscriberCheckURL()
            let services = try #require(try device.status()["services"]?.array)
            let dns = try #require(services.first { $0["name"]?.string == "dns-carrier" }?["pid"]?.int)
            kill(pid_t(dns), SIGSTOP)   // the carrier's DNS server stops answering
            defer { kill(pid_t(dns), SIGCONT) }
            let logMark = try device.requestLog().count
            let (fetch, packets) = try device.capture(on: ["wlan0", "wwan0"]) { try device.fetch([check.url]) }
            #expect(fetch.status == 75, "\(fetch.stderr)")
            #expect(fetch.json.failureReason == "dnsUnreachable")
            #expect(fetch.json.hops.isEmpty)
            #expect(packets["wlan0"] == [], "\(packets)")
            // The queries went to the carrier DNS through the bearer, and nothing else was sent.
            let cellular = packets["wwan0"] ?? []
            #expect(!cellular.isEmpty && cellular.allSatisfy { $0.contains("100.64.23.10") && $0.contains("> 100.64.0.53.53:") }, "\(cellular)")
            #expect(try device.requestLog().count == logMark)
        }
    }
}

/// Monotonic milliseconds.
func nowMs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
}
