// One test world for the redirect and fail-closed matrix: this chain-server world (World.swift,
// Fixtures/world.sh, Fixtures/chain_server.py) is kept, and the simulator-based
// RedirectConformanceTests and FailClosedTests (SimulatorEndToEndTests) were folded into it.
// It covers more: it breaks the path in ways the simulated world cannot (SO_BINDTODEVICE refused
// or silently ignored, a deleted link, a DNS server reachable only over Wi-Fi, IPv6 and
// dual-stack bearers), serves every redirect shape directly (the five method rules, a
// self-redirect that sets a cookie, non-http targets, huge headers, chunked and oversized bodies,
// refused and silent connects, headers across origins, HAR) and drives the engine with knobs the
// CLI lacks (a timed cancel). What only the simulator suites asserted now lives here: the path
// breaking while the second hop is in flight (link down, address removed, bearer dropped by the
// network) with the failing hop's number, a carrier DNS that stops answering, an http hop back to
// a host reached over https, 11 requests with --max-hops 11, the loop's exact request count, the
// redirect_url never requested, a control for the cookie test, and Wi-Fi silence for an untrusted
// certificate. The simulator's own behaviour (carrier faults, modem bearer drops, completing a
// check with its code) stays in SimulatedServicesTests and SimulatedModemsTests; the product
// chain's leak test and bad input through the CLI stay in SimulatorEndToEndTests.
import CellpathCore
import CellularHTTP
import FoundationEssentials
import Glibc
import SystemSupport
import TestSupport
import Testing
import Workflow

/// Everything that needs the netns world: leaks, fail-closed matrix, redirect conformance.
@Suite(
    .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .serialized, .world,
    .ownThreads(.worlds))
struct CellularChainTests {
    var world: World { get throws { try #require(World.current) } }

    // MARK: leak test

    @Test func captureOnWlan0SeesALeakyClient() throws {
        // Control: binding only the source address leaks through the default route; the capture must see it.
        let (_, packets) = try world.capture {
            try world.ueRun(["curl", "-s", "-m", "1", "--interface", "100.64.23.5", "http://100.64.0.1/final"])
        }
        #expect(
            packets.contains { $0.contains("IP 100.64.23.5.") && $0.contains(" > 100.64.0.1.80: Flags [S]") },
            "\(packets)")
    }

    @Test func aSecondCtrlCExitsAtOnceAndLeavesNothingOnWlan0() throws {
        // wwan0 (a TUN of the test world, no modem in sysfs) has no source-address rule here, so a segment answered from a closed socket would
        // leave through wlan0. The first SIGINT cancels (the orderly close waits for the server,
        // asleep in its handler, up to the hop timeout); the second arrives during the wait and
        // exits at once. The server then wakes and answers over TLS to the connection we left. This guards
        // the behaviour (exit 130, nothing on wlan0); it passes with or without the SO_LINGER reset
        // of `EmergencyExit`, because the kernel keeps an orphaned socket bound to its device.
        let w = try world
        let script = """
            "$0" fetch --interface wwan0 --allow-any-interface --dns 100.64.0.53 --cacert "$1" --hop-timeout 30 --timeout 60 "$2" & fetch=$!
            trap 'kill -INT $fetch' INT
            wait $fetch; status=$?; while kill -0 $fetch 2>/dev/null; do wait $fetch; status=$?; done
            sleep 4
            exit $status
            """
        let (result, packets) = try w.capture {
            try ProcessRunner.run(
                [
                    "ip", "netns", "exec", w.ue, "bash", "-c", script, CellpathBinary.path,
                    w.workdir + "/ca.pem", "https://api.truid.test/slow?s=3"
                ],
                environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent"],
                signals: [(after: 1.0, signal: SIGINT), (after: 1.2, signal: SIGINT)])
        }
        #expect(result.status == 130, "\(result.stderr)")
        #expect(result.stderr.contains("cancelling…"))
        #expect(packets.isEmpty, "\(packets)")
    }

    @Test func fetchWarnsOfAnInterfaceWithoutSourceAddressRule() throws {
        // wwan0 has no source-address rule in this world; with one for each of its addresses,
        // the kernel sends what comes from them through wwan0 and the warning goes away.
        let w = try world
        func fetch() throws -> ProcessResult {
            try w.ueRun(
                [
                    CellpathBinary.path, "fetch", "--interface", "wwan0", "--allow-any-interface", "--dns",
                    "100.64.0.53",
                    "http://mno.carrier.test/final"
                ],
                environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent"])
        }
        let without = try fetch()
        #expect(without.status == 0, "\(without.stderr)")
        #expect(
            without.stderr.contains("warning: --interface wwan0 has no source-address rule for 100.64.23.5:"),
            "\(without.stderr)")
        #expect(without.stderr.contains("has no source-address rule for fd00:64::5:"))
        #expect(!SourceAddressRule.exists(interface: "wwan0", address: "not an address"))

        let rules = [
            ["ip", "route", "add", "default", "dev", "wwan0", "table", "105"],
            ["ip", "rule", "add", "from", "100.64.23.5", "table", "105"],
            ["ip", "-6", "route", "add", "default", "dev", "wwan0", "table", "105"],
            ["ip", "-6", "rule", "add", "from", "fd00:64::5", "table", "105"]
        ]
        defer {
            _ = try? w.ueRun(["ip", "rule", "del", "from", "100.64.23.5", "table", "105"])
            _ = try? w.ueRun(["ip", "-6", "rule", "del", "from", "fd00:64::5", "table", "105"])
            _ = try? w.ueRun(["ip", "route", "flush", "table", "105"])
            _ = try? w.ueRun(["ip", "-6", "route", "flush", "table", "105"])
        }
        for rule in rules { try #require(try w.ueRun(rule).status == 0, "\(rule)") }
        let with = try fetch()
        #expect(with.status == 0, "\(with.stderr)")
        #expect(!with.stderr.contains("source-address rule"), "\(with.stderr)")
    }

    @Test func wholeChainAndDNSStayOffWlan0() throws {
        let w = try world
        let mark = try w.serverLogMark()
        let (out, packets) = try w.capture {
            try w.fetchOnCellular("https://api.truid.test/downgrade")
        }
        let (out2, packets2) = try w.capture {
            try w.fetchOnCellular("http://mno.carrier.test/empty-path")
        }
        #expect(out.status == 0 && out2.status == 0)
        #expect(packets.isEmpty, "packets on wlan0: \(packets)")
        #expect(packets2.isEmpty, "packets on wlan0: \(packets2)")
        #expect(out.report.hops.count == 2 && out2.report.hops.count == 3)
        let requests = try w.serverRequests(since: mark)
        #expect(requests.count == 5)
        for r in requests { #expect(r["client"] == .string("100.64.23.5")) }
        for hop in out.report.hops + out2.report.hops { #expect(hop.localAddress == "100.64.23.5") }
        let dns = try w.dnsLog()
        #expect(dns.contains("query[A] api.truid.test from 100.64.23.5"))
        #expect(dns.contains("query[A] other.carrier.test from 100.64.23.5"))
    }

    @Test func captureFilterForBadInputSeesARealFetch() throws {
        // Control for badInputRejectedBeforeAnyPacket: the same filter sees a valid fetch's DNS and SYN.
        let w = try world
        let (_, packets) = try w.capture(
            on: "wwan0", filter: "src host 100.64.23.5 and (udp or tcp[tcpflags] & tcp-syn != 0)"
        ) {
            try w.fetchOnCellular("http://mno.carrier.test/final")
        }
        #expect(
            packets.contains { $0.contains("100.64.0.53.53") }
                && packets.contains { $0.contains("100.64.0.1.80: Flags [S]") })
    }

    @Test func cancellationStopsAHangingHop() throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test/slow?s=4", ["--cancel-after", "300"])
        #expect(out.report.failure?.reason == .cancelled)
        // The chain's own clock, without the probe's start-up: cancelled at 300 ms, not after the server's 4 s.
        #expect(out.report.totalMs < 1000, "\(out.report.totalMs) ms")
    }

    @Test(arguments: [
        ("http://mno.carrier.test/slow?s=1.5", "5"), ("https://api.truid.test/slow?s=1.5", "5"),
        ("http://mno.carrier.test/slow?s=2.5", "1"), ("https://api.truid.test/slow?s=2.5", "1")
    ])
    func aCancelledHopWhoseServerAnswersLaterLeavesNothingOnWlan0(url: String, hopTimeout: String) throws {
        // Cancelled at 300 ms while the server sleeps. With a 5 s hop timeout the orderly close
        // waits for its answer (1.5 s) and its FIN; with 1 s it stops waiting first and resets
        // the connection through the still-bound socket, so the answer (2.5 s) is never sent. An
        // orphaned socket would die on the answer's first segment and leave what follows to a
        // kernel RST without binding, out through wlan0 (wwan0 has no source-address rule).
        let w = try world
        let (out, packets) = try w.capture {
            let out = try w.fetchOnCellular(url, ["--cancel-after", "300", "--hop-timeout", hopTimeout])
            usleep(2_500_000)  // past the server's answer
            return out
        }
        #expect(out.report.failure?.reason == .cancelled, "\(String(describing: out.report.failure))")
        #expect(packets.isEmpty, "packets on wlan0: \(packets)")
    }

    // MARK: fail-closed matrix

    /// Runs the probe with a capture on wlan0 and checks the failure reason and silence.
    private func expectFailure(
        _ reason: FetchFailureReason, _ args: [String], preload: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> FetchReport {
        let w = try world
        let (out, packets) = try w.capture { try w.fetch(args, preload: preload) }
        #expect(out.status != 0, sourceLocation: sourceLocation)
        #expect(
            out.report.failure?.reason == reason, "\(String(describing: out.report.failure))",
            sourceLocation: sourceLocation)
        #expect(packets.isEmpty, "packets on wlan0: \(packets)", sourceLocation: sourceLocation)
        return out.report
    }

    /// Hop 1 redirects to a hook, hop 2, that runs `shell` before the server answers: the answer
    /// never arrives, and hop 2's failure tells what became of the path. Nothing goes through Wi-Fi.
    /// Each such test breaks an interface of its own and leaves it broken, so that its half-closed
    /// connection cannot meet another test's changes (a late segment for it after its address was
    /// removed would draw a kernel RST that follows the main routing table).
    /// The hop timeout is long (20 s): the failure comes as the path goes, not when the hop times out.
    private func expectSecondHopFailure(
        _ reason: FetchFailureReason, interface: String, hook: String, shell: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let w = try world
        try w.writeHook(hook, shell)
        let r = try expectFailure(
            reason,
            [
                "--interface", interface, "--dns", "100.64.0.53", "--hop-timeout", "20",
                "http://mno.carrier.test/redirect?to=/hook%3Fname%3D\(hook)"
            ],
            sourceLocation: sourceLocation)
        #expect(r.failure?.hop == 2, sourceLocation: sourceLocation)
        #expect(r.hops.map(\.status) == [302, 0], sourceLocation: sourceLocation)
        #expect(r.result == nil, sourceLocation: sourceLocation)
        #expect(r.totalMs < 10_000, "\(r.totalMs) ms", sourceLocation: sourceLocation)
    }

    @Test func interfaceMissing() throws {
        let r = try expectFailure(
            .noSuchInterface,
            [
                "--interface", "wwan9", "--ipv4", "100.64.23.5", "--dns", "100.64.0.53",
                "http://mno.carrier.test/final"
            ])
        #expect(r.hops.isEmpty)
    }

    @Test func interfaceWithoutAddress() throws {
        let r = try expectFailure(
            .addressGone,
            [
                "--interface", "wwan2", "--ipv4", "100.64.23.9", "--dns", "100.64.0.53",
                "http://mno.carrier.test/final"
            ])
        #expect(r.hops.isEmpty)
        // Discovering the path from an interface without address fails the same way: nothing sent.
        let discovered = try expectFailure(
            .noAddress, ["--interface", "wwan2", "--dns", "100.64.0.53", "http://mno.carrier.test/final"])
        #expect(discovered.failure?.message == "interface wwan2 has no address")
    }

    @Test func addressRemovedMidChain() throws {
        // wwan8 is this test's own and stays without its address (see expectSecondHopFailure):
        // restoring it let a late segment of the half-closed connection draw a kernel RST through
        // Wi-Fi during a later test.
        let w = try world
        try w.writeHook("deladdr", "ip netns exec \(w.ue) ip addr del 100.64.23.13/32 dev wwan8")
        let r = try expectFailure(
            .addressGone,
            [
                "--interface", "wwan8", "--dns", "100.64.0.53", "--hop-timeout", "2",
                "http://mno.carrier.test/hook?name=deladdr"
            ])
        #expect(r.hops.count == 1)
    }

    @Test func interfaceDeletedMidChain() throws {
        // The kernel takes a link down before it deletes it, and netlink reports the first step at
        // once: the hop fails on whichever the fetch sees first, both "the path went away" (69).
        let w = try world
        try w.writeHook("dellink", "ip netns exec \(w.ue) ip link del wwan3")
        let (out, packets) = try w.capture {
            try w.fetch([
                "--interface", "wwan3", "--dns", "100.64.0.53", "--hop-timeout", "20",
                "http://mno.carrier.test/hook?name=dellink"
            ])
        }
        let r = out.report
        #expect([.noSuchInterface, .interfaceDown].contains(r.failure?.reason), "\(String(describing: r.failure))")
        #expect(r.hops.count == 1 && r.totalMs < 10_000, "\(r.hops.count) hops, \(r.totalMs) ms")
        #expect(packets.isEmpty, "packets on wlan0: \(packets)")
    }

    @Test func interfaceDown() throws {
        let w = try world
        try w.ueRun(["ip", "link", "set", "wwan1", "down"])
        defer { _ = try? w.ueRun(["ip", "link", "set", "wwan1", "up"]) }
        _ = try expectFailure(
            .interfaceDown,
            [
                "--interface", "wwan1", "--ipv4", "100.64.23.6", "--dns", "100.64.0.53",
                "http://mno.carrier.test/final"
            ])
    }

    @Test func bearerDisconnectedWhileTheSecondHopIsInFlight() throws {
        let w = try world
        try expectSecondHopFailure(
            .interfaceDown, interface: "wwan5", hook: "linkdown",
            shell: "ip netns exec \(w.ue) ip link set wwan5 down")
    }

    @Test func bearerAddressRemovedWhileTheSecondHopIsInFlight() throws {
        let w = try world
        try expectSecondHopFailure(
            .addressGone, interface: "wwan6", hook: "deladdr-in-flight",
            shell: "ip netns exec \(w.ue) ip addr del 100.64.23.11/32 dev wwan6")
    }

    @Test func bearerDroppedByTheNetworkWhileTheSecondHopIsInFlight() throws {
        // The carrier's end goes away (the hook runs in the carrier): wwan4 stays up with its
        // address but loses its carrier, which netlink reports at once.
        try expectSecondHopFailure(
            .interfaceDown, interface: "wwan4", hook: "dropbearer", shell: "ip link set radio4 down")
    }

    @Test func bearerLostDuringDNSIsInterfaceDownNotADNSTimeout() throws {
        // The carrier DNS holds the query; wwan7 goes down while it waits.
        let w = try world
        let r = try w.withCarrierDNSSilent {
            try Threads.detach {
                usleep(400_000); _ = try? w.ueRun(["ip", "link", "set", "wwan7", "down"])
            }
            return try expectFailure(
                .interfaceDown,
                [
                    "--interface", "wwan7", "--dns", "100.64.0.53", "--hop-timeout", "20",
                    "http://mno.carrier.test/final"
                ])
        }
        #expect(r.hops.isEmpty && r.failure?.hop == 1)
        #expect(r.totalMs < 10_000, "\(r.totalMs) ms")
    }

    @Test func dnsServerOnTheWiFiSideIsStillAskedOnlyThroughWwan0() throws {
        // 192.0.2.1 is reachable only through wlan0; the bound DNS socket must not get there.
        _ = try expectFailure(
            .dnsUnreachable,
            [
                "--interface", "wwan0", "--dns", "192.0.2.1", "--hop-timeout", "2",
                "http://mno.carrier.test/final"
            ])
    }

    @Test func carrierDNSUnreachable() throws {
        _ = try expectFailure(
            .dnsUnreachable,
            [
                "--interface", "wwan0", "--dns", "100.64.0.54", "--hop-timeout", "2",
                "http://mno.carrier.test/final"
            ])
    }

    @Test func carrierDNSThatStopsAnsweringIsAskedOnlyThroughTheBearer() throws {
        let w = try world
        // The DNS server resumes only after the captures: its late answers would reach closed
        // sockets, and the kernel's ICMP port-unreachable for them follows the main routing table.
        let ((out, cellular), wifi) = try w.withCarrierDNSSilent {
            try w.capture {
                try w.capture(on: "wwan0", filter: "src host 100.64.23.5 and (udp or tcp[tcpflags] & tcp-syn != 0)") {
                    try w.fetchOnCellular("http://mno.carrier.test/final", ["--hop-timeout", "2"])
                }
            }
        }
        #expect(out.report.failure?.reason == .dnsUnreachable, "\(String(describing: out.report.failure))")
        #expect(out.report.hops.isEmpty)
        #expect(wifi.isEmpty, "packets on wlan0: \(wifi)")
        // Queries went to the carrier DNS from the bearer address, and no connection was opened.
        #expect(
            !cellular.isEmpty
                && cellular.allSatisfy { $0.contains("IP 100.64.23.5.") && $0.contains(" > 100.64.0.53.53: ") },
            "\(cellular)")
    }

    @Test func aDNSAnswerAfterTheCancelStillFindsItsSocket() throws {
        // The lookup is in flight when the fetch is cancelled (at 300 ms); the carrier DNS
        // answers at 650 ms, while the cancelled chain closes. wwan0 has no source-address rule:
        // an answer reaching a closed socket would draw an ICMP port unreachable through wlan0.
        let w = try world
        let query = "query[A] mno.carrier.test from 100.64.23.5"
        let asked = try w.dnsLog().components(separatedBy: query).count
        let (out, wifi) = try w.withCarrierDNSSilent(resumeAfter: 0.65) {
            try w.capture {
                let out = try w.fetchOnCellular("http://mno.carrier.test/final", ["--cancel-after", "300"])
                // The capture lasts until the server has answered (the reply follows its log line).
                try w.waitUntil("the carrier DNS answers") {
                    try w.dnsLog().components(separatedBy: query).count > asked
                }
                usleep(200_000)
                return out
            }
        }
        #expect(out.report.failure?.reason == .cancelled, "\(String(describing: out.report.failure))")
        #expect(out.report.hops.isEmpty)
        #expect(wifi.isEmpty, "packets on wlan0: \(wifi)")
    }

    @Test func nameUnknownToCarrierDNS() throws {
        let r = try expectFailure(
            .dnsNoSuchName, ["--interface", "wwan0", "--dns", "100.64.0.53", "http://nx.carrier.test/final"])
        #expect(r.failure?.message.contains("NXDOMAIN") == true)
    }

    @Test func carrierDNSRefusesTheName() throws {
        // The carrier DNS serves only test. and forwards nothing: it answers REFUSED.
        let r = try expectFailure(
            .dnsRefused, ["--interface", "wwan0", "--dns", "100.64.0.53", "http://nx.example/final"])
        #expect(r.failure?.message.contains("REFUSED") == true)
    }

    @Test func anInvalidDNSServerIsBadInput() throws {
        _ = try expectFailure(
            .invalidDNSServer,
            [
                "--interface", "wwan0", "--ipv4", "100.64.23.5", "--dns", "foo",
                "http://mno.carrier.test/final"
            ])
    }

    @Test(arguments: [
        ("http://127.0.0.1/final", 0), ("http://[::1]/final", 0), ("http://192.0.2.23/final", 0),
        ("http://localhost/final", 0), ("http://self.carrier.test/final", 0),
        ("http://mno.carrier.test/to-loopback", 1)
    ])
    func aDestinationOnThisDeviceFailsAtOnce(url: String, hopsBefore: Int) throws {
        // Loopback, the device's Wi-Fi address, localhost, a name the carrier DNS resolves to the
        // bearer's own address, a redirect to loopback: nothing through wwan0 reaches them.
        let r = try expectFailure(
            .localDestination, ["--interface", "wwan0", "--dns", "100.64.0.53", "--hop-timeout", "20", url])
        #expect(r.hops.count == hopsBefore && r.failure?.hop == hopsBefore + 1)
        #expect(r.totalMs < 10_000, "\(r.totalMs) ms")
    }

    @Test(arguments: [
        ("/http09", FetchFailureReason.notHTTP), ("/garbage-status", .notHTTP), ("/huge-location", .headerTooLarge)
    ])
    func anAnswerThatIsNotHTTPIsAProtocolError(path: String, reason: FetchFailureReason) throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test\(path)")
        #expect(out.report.failure?.reason == reason, "\(String(describing: out.report.failure))")
        #expect(reason.kind == .protocolError)
    }

    @Test func exitCodesNameTheCause() throws {
        // Through the CLI: NXDOMAIN 68, not HTTP 76, an invalid --dns 64, a 64-character label 65.
        let w = try world
        func fetch(_ dns: String, _ url: String) throws -> ProcessResult {
            try w.ueRun(
                [CellpathBinary.path, "fetch", "--interface", "wwan0", "--allow-any-interface", "--dns", dns, url],
                environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent"])
        }
        let label = String(repeating: "a", count: 64)
        let cases: [(String, String, Int32)] = [
            ("100.64.0.53", "http://nx.carrier.test/", 68), ("100.64.0.53", "http://mno.carrier.test/http09", 76),
            ("foo", "http://mno.carrier.test/final", 64), ("100.64.0.53", "http://\(label).carrier.test/", 65)
        ]
        for (dns, url, code) in cases {
            let result = try fetch(dns, url)
            #expect(result.status == code, "\(url) with --dns \(dns): \(result.stderr)")
        }
    }

    @Test(arguments: ["refuse", "ignore"])
    func deviceBindRefused(mode: String) throws {
        // "refuse": SO_BINDTODEVICE fails with EPERM; "ignore": it claims success but does nothing,
        // which only the getsockopt verification catches. Both for DNS and for an address literal.
        let preload = try buildPreloadShim(mode)
        _ = try expectFailure(
            .bindRefused, ["--interface", "wwan0", "--dns", "100.64.0.53", "http://mno.carrier.test/final"],
            preload: preload)
        _ = try expectFailure(
            .bindRefused, ["--interface", "wwan0", "--dns", "100.64.0.53", "http://100.64.0.1/final"],
            preload: preload)
    }

    /// Builds an LD_PRELOAD library that sabotages setsockopt(SO_BINDTODEVICE).
    private func buildPreloadShim(_ mode: String) throws -> String {
        let w = try world
        let src = "\(w.workdir)/nobind-\(mode).c", lib = "\(w.workdir)/nobind-\(mode).so"
        let code = """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <errno.h>
            #include <sys/socket.h>
            int setsockopt(int fd, int level, int name, const void *v, socklen_t len) {
                static int (*real)(int, int, int, const void *, socklen_t);
                if (!real) real = dlsym(RTLD_NEXT, "setsockopt");
                if (level == SOL_SOCKET && name == SO_BINDTODEVICE) {
                    \(mode == "refuse" ? "errno = EPERM; return -1;" : "return 0;")
                }
                return real(fd, level, name, v, len);
            }
            """
        guard let f = fopen(src, "w") else { throw WorldError("cannot write \(src)") }
        fputs(code, f)
        fclose(f)
        var errors = ""
        for compiler in ["cc", "clang", "/opt/swift/usr/bin/clang"] {
            guard let r = try? ProcessRunner.run([compiler, "-shared", "-fPIC", "-o", lib, src, "-ldl"]) else {
                continue
            }
            if r.status == 0 { return lib }
            errors += r.stderr
        }
        throw WorldError("couldn't build the LD_PRELOAD shim: \(errors)")
    }

    // MARK: redirect conformance

    @Test func relativeLocationWithQuery() throws {
        let w = try world
        let mark = try w.serverLogMark()
        let out = try w.fetchOnCellular("http://mno.carrier.test/dir/rel")
        #expect(out.report.result?.finalStatus == 200)
        #expect(
            out.report.hops.map(\.url) == [
                "http://mno.carrier.test/dir/rel", "http://mno.carrier.test/dir/step2?x=1&y=a%20b",
                "http://mno.carrier.test/final"
            ])
        #expect(
            try w.serverRequests(since: mark).map { $0["path"] } == [
                .string("/dir/rel"), .string("/dir/step2?x=1&y=a%20b"), .string("/final")
            ])
        // The relative Location as the server sent it, and as the trace resolved it.
        let first = try #require(out.report.hops.first)
        #expect(first.responseHeaders.contains(HTTPHeader("Location", "step2?x=1&y=a%20b")))
        #expect(first.location == "http://mno.carrier.test/dir/step2?x=1&y=a%20b")
    }

    @Test func emptyPathAcrossOrigins() throws {
        let w = try world
        let mark = try w.serverLogMark()
        let out = try w.fetchOnCellular("http://mno.carrier.test/empty-path")
        #expect(out.report.result?.finalStatus == 200)
        let hops = out.report.hops
        try #require(hops.count == 3)
        #expect(hops[1].url == "http://other.carrier.test:8080/?from=empty")
        let reqs = try w.serverRequests(since: mark)
        try #require(reqs.count == 3)
        #expect(reqs[1]["path"] == .string("/?from=empty") && reqs[1]["host"] == .string("other.carrier.test:8080"))
        // Back to the first origin: its connection is reused.
        #expect(hops[2].connectionReused && hops[2].localPort == hops[0].localPort)
    }

    /// Each host is asked once per chain; the world's dnsmasq answers with TTL 0 (its default),
    /// which the trace reports as c-ares gives it.
    @Test func eachHostIsAskedOncePerChainWithTheTTLTheDNSGave() throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test/empty-path")
        let hops = out.report.hops
        try #require(hops.count == 3)
        #expect(hops.map(\.dnsSource) == [.network, .network, .chain])
        #expect(hops.map(\.dnsTTL) == [0, 0, nil])
        #expect(hops[0].timings.dnsMs > 0 && hops[1].timings.dnsMs > 0 && hops[2].timings.dnsMs == 0)
        #expect(hops[2].dnsAnswers == hops[0].dnsAnswers)
    }

    @Test func cookiesCarriedAndRedacted() throws {
        let w = try world
        // Control: a client without a cookie engine is refused by the cookie check.
        let plain = try w.ueRun([
            "curl", "-s", "-L", "-o", "/dev/null", "-w", "%{http_code}", "--interface", "wwan0",
            "--resolve", "mno.carrier.test:80:100.64.0.1", "http://mno.carrier.test/cookie/set"
        ])
        #expect(plain.stdout == "403")

        let mark = try w.serverLogMark()
        let out = try w.fetchOnCellular("http://mno.carrier.test/cookie/set")
        #expect(out.report.result?.finalStatus == 200)
        let reqs = try w.serverRequests(since: mark)
        try #require(reqs.count >= 2)
        #expect(reqs[1]["cookie"] == .string("sid=s3cr3t-cookie"))
        // The second hop sent it, masked in the trace.
        let second = try #require(out.report.hops.dropFirst().first)
        #expect(second.requestHeaders.contains(HTTPHeader("Cookie", "sid=[redacted]")), "\(second.requestHeaders)")
        let json = try w.ueRun([
            World.probe, "--interface", "wwan0", "--dns", "100.64.0.53", "http://mno.carrier.test/cookie/set"
        ]).stdout
        #expect(!json.contains("s3cr3t-cookie") && json.contains("sid=[redacted]"))
        #expect(!json.contains("c0de-s3cret"))
        let full = try w.ueRun([
            World.probe, "--full", "--interface", "wwan0", "--dns", "100.64.0.53", "http://mno.carrier.test/cookie/set"
        ]).stdout
        #expect(full.contains("s3cr3t-cookie") && full.contains("c0de-s3cret"))
    }

    @Test(arguments: [(301, "GET", ""), (302, "GET", ""), (303, "GET", ""), (307, "POST", "a=1"), (308, "POST", "a=1")])
    func redirectMethodRules(status: Int, method: String, body: String) throws {
        let out = try world.fetchOnCellular(
            "http://mno.carrier.test/status/\(status)", ["--method", "POST", "--data", "a=1"])
        #expect(out.report.hops.first?.status == status)
        #expect(out.report.result?.json?["method"] == .string(method))
        #expect(out.report.result?.json?["body"] == .string(body))
    }

    @Test func tenHopsSucceedElevenFail() throws {
        let w = try world
        let ok = try w.fetchOnCellular("http://mno.carrier.test/chain?n=10&i=1", ["--max-hops", "10"])
        #expect(ok.status == 0 && ok.report.hops.count == 10 && ok.callback?.checkID == "chk-123")
        let mark = try w.serverLogMark()
        let bad = try w.fetchOnCellular("http://mno.carrier.test/chain?n=11&i=1", ["--max-hops", "10"])
        #expect(bad.report.failure?.reason == .tooManyHops && bad.report.hops.count == 10)
        #expect(bad.report.failure?.hop == 10)
        #expect(bad.report.hops.allSatisfy { $0.status == 302 })
        #expect(try w.serverRequests(since: mark).count == 10)
        // The same chain with one more request allowed completes.
        let longer = try w.fetchOnCellular("http://mno.carrier.test/chain?n=11&i=1", ["--max-hops", "11"])
        #expect(longer.status == 0 && longer.report.hops.count == 11 && longer.callback?.checkID == "chk-123")
    }

    @Test(arguments: [("/loop", 2), ("/loop-a", 3)])
    func redirectLoop(path: String, requests: Int) throws {
        let w = try world
        let mark = try w.serverLogMark()
        let out = try w.fetchOnCellular("http://mno.carrier.test\(path)")
        #expect(out.report.failure?.reason == .redirectLoop)
        #expect(out.report.hops.count <= 3)
        // Detected at the first repetition: the repeated request is never sent again.
        #expect(out.report.hops.count == requests && out.report.failure?.hop == requests)
        #expect(try w.serverRequests(since: mark).count == requests)
    }

    @Test func selfRedirectThatSetsACookieIsNoLoop() throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test/self-cookie")
        #expect(out.report.result?.finalStatus == 200 && out.report.hops.count == 2)
    }

    @Test func thePlainHTTPCarrierLegIsLabelledAndPassesStrict() throws {
        let w = try world
        for options in [[], ["--strict"]] {
            let out = try w.fetchOnCellular("https://api.truid.test/downgrade", options)
            #expect(out.report.result?.finalStatus == 200 && out.status == 0, "\(options): \(out.stderr)")
            #expect(out.report.hops.map(\.downgrade) == [false, false])
            try #require(out.report.hops.count == 2)
            #expect(out.report.hops[0].tlsVersion?.hasPrefix("TLSv1.") == true && out.report.hops[1].tlsVersion == nil)
            // The probe prints the human lines on stderr.
            #expect(
                out.stderr.contains("plain http: carrier leg") && !out.stderr.contains("DOWNGRADE"), "\(out.stderr)")
        }
    }

    @Test func plainHTTPBackToAHostReachedOverHTTPSIsADowngrade() throws {
        let w = try world
        let lax = try w.fetchOnCellular("https://api.truid.test/downgrade-back")
        #expect(lax.status == 0 && lax.report.result?.finalStatus == 200)
        let hops = lax.report.hops
        try #require(hops.count == 3)
        // Hop 2 is the carrier's plain-http leg; hop 3 returns to api.truid.test, reached over
        // https before, without TLS: that one is reported.
        #expect(hops.map(\.downgrade) == [false, false, true])
        #expect(hops[2].url == "http://api.truid.test/final" && hops[2].remotePort == 80 && hops[2].tlsVersion == nil)

        let mark = try w.serverLogMark()
        let strict = try w.fetchOnCellular("https://api.truid.test/downgrade-back", ["--strict"])
        #expect(strict.report.failure?.reason == .downgradeRefused && strict.report.failure?.hop == 3)
        // Nothing went back to the API over plain http: the server saw the https request and the carrier leg.
        let sent = try w.serverRequests(since: mark)
        #expect(sent.count == 2 && sent.first?["tls"] == .bool(true), "\(sent)")
    }

    @Test func nonHTTPRedirectRefused() throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test/scheme")
        #expect(out.report.failure?.reason == .nonHTTPScheme && out.report.hops.count == 1)
    }

    @Test func hugeHeadersAndChunkedBody() throws {
        let w = try world
        let huge = try w.fetchOnCellular("http://mno.carrier.test/huge")
        #expect(huge.report.result?.finalStatus == 200)
        let hugeHop = try #require(huge.report.hops.first)
        #expect(hugeHop.headerBytes > 60_000)
        let chunked = try w.fetchOnCellular("http://mno.carrier.test/chunked", ["--full"])
        #expect(chunked.callback == CheckCallback(checkID: "chk-123", code: "c0de-s3cret", referenceID: "ref-42"))
        let chunkedHop = try #require(chunked.report.hops.first)
        #expect(chunkedHop.responseHeaders.contains(HTTPHeader("Transfer-Encoding", "chunked")))
    }

    @Test func bigBodyReadWholeButKeptCapped() throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test/big?bytes=3000000")
        #expect(out.report.result?.finalStatus == 200)
        let hop = try #require(out.report.hops.first)
        #expect(hop.bodyBytes == 3_000_000)
        #expect(out.report.result?.finalBodyTruncated == true && out.report.result?.finalBody.utf8.count == 1 << 20)
    }

    @Test func slowHopTimesOut() throws {
        let w = try world
        let hop = try w.fetchOnCellular("http://mno.carrier.test/slow?s=4", ["--hop-timeout", "1"])
        #expect(hop.report.failure?.reason == .hopTimeout)
        let total = try w.fetchOnCellular("http://mno.carrier.test/slow?s=4", ["--hop-timeout", "3", "--timeout", "1"])
        #expect(total.report.failure?.reason == .totalTimeout)
        // The chains' own clocks, without the probe's start-up: each ended at its 1 s budget,
        // long before the server's 4 s.
        #expect(
            hop.report.totalMs < 2000 && total.report.totalMs < 2000,
            "\(hop.report.totalMs) ms, \(total.report.totalMs) ms")
    }

    @Test func secondHopThatNeverAnswersIsAHopTimeout() throws {
        let w = try world
        let mark = try w.serverLogMark()
        let (out, wifi) = try w.capture {
            try w.fetchOnCellular("http://mno.carrier.test/redirect?to=/slow%3Fs%3D4", ["--hop-timeout", "1"])
        }
        #expect(out.report.failure?.reason == .hopTimeout && out.report.failure?.hop == 2)
        #expect(out.report.hops.first?.status == 302)
        #expect(out.report.totalMs < 3000, "\(out.report.totalMs) ms")
        #expect(wifi.isEmpty, "packets on wlan0: \(wifi)")
        // Both requests reached the carrier from the bearer address.
        #expect(
            try w.serverRequests(since: mark).map { $0["client"] } == [.string("100.64.23.5"), .string("100.64.23.5")])
    }

    @Test func connectRefusedAndConnectTimeoutAreTold() throws {
        let w = try world
        let refused = try w.fetchOnCellular("http://100.64.0.1:81/final")
        #expect(refused.report.failure?.reason == .connectFailed)
        // Nobody holds 100.64.0.99 in the carrier: the connection never completes.
        let silent = try w.fetchOnCellular("http://100.64.0.99/final", ["--hop-timeout", "1"])
        #expect(silent.report.failure?.reason == .connectTimeout)
    }

    @Test func headersAcrossOrigins() throws {
        let w = try world
        let mark = try w.serverLogMark()
        let out = try w.fetchOnCellular(
            "http://mno.carrier.test/empty-path",
            ["--header", "Authorization: Bearer tok-SECRET", "--header", "X-Trace: 1", "--operator", "00101"])
        #expect(out.report.result?.finalStatus == 200)
        let reqs = try w.serverRequests(since: mark)
        try #require(reqs.count == 3)
        func header(_ i: Int, _ name: String) -> JSONValue? {
            reqs[i]["headers"]?[name]
        }
        #expect(header(0, "authorization") == .string("Bearer tok-SECRET"))
        #expect(header(1, "authorization") == nil && header(2, "authorization") == nil)
        // x-tru-ops goes with the first request only, as the SDKs send it; other headers with every one.
        #expect(
            header(0, "x-tru-ops") == .string("00101") && header(1, "x-tru-ops") == nil && header(2, "x-tru-ops") == nil
        )
        #expect((0 ..< 3).allSatisfy { header($0, "x-trace") == .string("1") })
        #expect((0 ..< 3).allSatisfy { header($0, "user-agent") == .string("cellpath/\(CellpathVersion.current)") })
        #expect(
            out.report.hops.first?.requestHeaders.contains(HTTPHeader("Authorization", "Bearer [redacted]")) == true)
    }

    /// A late header (the serving network a modem confirms beside the chain) is asked once the
    /// first request's connection is up and goes with that request only; one with a control
    /// character fails the hop before anything is written.
    @Test func lateFirstRequestHeaderIsAskedBeforeTheRequestIsWritten() throws {
        let w = try world
        let mark = try w.serverLogMark()
        let out = try w.fetchOnCellular("http://mno.carrier.test/empty-path", ["--late-header", "x-tru-ops:00202@300"])
        #expect(out.report.result?.finalStatus == 200)
        let reqs = try w.serverRequests(since: mark)
        try #require(reqs.count == 3)
        #expect(reqs[0]["headers"]?["x-tru-ops"] == .string("00202"))
        #expect(reqs[1]["headers"]?["x-tru-ops"] == nil && reqs[2]["headers"]?["x-tru-ops"] == nil)
        #expect(out.report.hops.first?.requestHeaders.contains(HTTPHeader("x-tru-ops", "00202")) == true)
        // The wait is the first hop's, after its connection was made.
        #expect((out.report.hops.first?.timings.totalMs ?? 0) >= 300, "\(out.report.hops)")
        #expect(out.report.hops.first?.timings.connectMs != nil)

        let badMark = try w.serverLogMark()
        let bad = try w.fetchOnCellular("http://mno.carrier.test/final", ["--late-header", "x-tru-ops:1\u{7}2@0"])
        #expect(bad.report.failure?.reason == .invalidHeader && bad.report.failure?.hop == 1, "\(bad.report)")
        #expect(try w.serverRequests(since: badMark).isEmpty)
    }

    @Test func tlsFailsWithWrongCA() throws {
        let w = try world
        let mark = try w.serverLogMark()
        let r = try expectFailure(
            .tlsFailure,
            [
                "--interface", "wwan0", "--dns", "100.64.0.53", "--cacert", w.workdir + "/wrong-ca.pem",
                "https://api.truid.test/final"
            ])
        // The handshake failed before any request was sent.
        #expect(r.hops.map(\.status) == [0])
        #expect(try w.serverRequests(since: mark).isEmpty)
    }

    @Test func stopAtRedirectURLKeepsQueryAndFragment() throws {
        let w = try world
        let mark = try w.serverLogMark()
        let out = try w.fetchOnCellular(
            "http://mno.carrier.test/stop", ["--stop-at", "https://app.example.test/", "--full"])
        #expect(out.status == 0 && out.report.hops.count == 1)
        #expect(out.report.hops.first?.status == 302)
        #expect(
            out.report.result?.stoppedAt == "https://app.example.test/callback?check_id=chk-123&code=c0de-s3cret#frag")
        // The redirect_url itself was never requested, nor even looked up.
        #expect(try w.serverRequests(since: mark).count == 1)
        let dns = try w.dnsLog()
        #expect(!dns.contains("app.example.test"))
        let redacted = try w.fetchOnCellular("http://mno.carrier.test/stop", ["--stop-at", "https://app.example.test/"])
        #expect(
            redacted.report.result?.stoppedAt
                == "https://app.example.test/callback?check_id=chk-123&code=[redacted]#frag")
    }

    @Test func oneConnectionAcrossHopsAndHAR() throws {
        let w = try world
        let har = w.workdir + "/chain.har"
        let tls = try w.fetchOnCellular("https://api.truid.test/to-https", ["--har", har])
        #expect(tls.status == 0 && tls.report.result?.finalStatus == 200)
        // The second hop reuses the TLS connection and still reports its TLS version.
        #expect(tls.report.hops.map(\.connectionReused) == [false, true])
        #expect(tls.report.hops.allSatisfy { $0.tlsVersion?.hasPrefix("TLSv1.") == true })
        #expect(try harEntries(har).count == 2)

        let chain = try w.fetchOnCellular("http://mno.carrier.test/chain?n=3&i=1", ["--har", har])
        #expect(chain.report.hops.map(\.connectionReused) == [false, true, true])
        #expect(Set(chain.report.hops.map(\.localPort)).count == 1)
        let text = try ProcessRunner.run(["cat", har]).stdout
        let doc = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        let entries = try harEntries(har)
        #expect(doc["log"]?["version"] == .string("1.2") && entries.count == 3)
        #expect(!text.contains("c0de-s3cret"))
    }

    /// The entries of a HAR file.
    private func harEntries(_ path: String) throws -> [JSONValue] {
        let text = try ProcessRunner.run(["cat", path]).stdout
        let doc = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        return try #require(doc["log"]?["entries"]?.array, "HAR has no log.entries: \(text)")
    }

    @Test func ipTypeSelectsTheBearerAddressFamily() throws {
        let w = try world
        let mark = try w.serverLogMark()
        let v6 = try w.fetchOnCellular("http://v6.carrier.test/final", ["--ip-type", "ipv6"])
        #expect(v6.report.result?.finalStatus == 200)
        #expect(
            v6.report.hops.first?.localAddress == "fd00:64::5" && v6.report.hops.first?.remoteAddress == "fd00:64::1")
        let v4 = try w.fetchOnCellular("http://dual.carrier.test/final", ["--ip-type", "ipv4"])
        #expect(
            v4.report.hops.first?.localAddress == "100.64.23.5" && v4.report.hops.first?.dnsAnswers == ["100.64.0.1"])
        #expect(
            try w.serverRequests(since: mark).map { $0["client"] } == [.string("fd00:64::5"), .string("100.64.23.5")])
        // A dual-stack name on a v4-only bearer (wwan1): only the A record is used.
        let v4only = try w.fetch(["--interface", "wwan1", "--dns", "100.64.0.53", "http://dual.carrier.test/final"])
        #expect(v4only.report.result?.finalStatus == 200 && v4only.report.hops.first?.dnsAnswers == ["100.64.0.1"])
        let none = try w.fetchOnCellular("http://mno.carrier.test/final", ["--ip-type", "ipv6"])
        #expect(none.report.failure?.reason == .dnsNoAnswer)
        let literal = try w.fetchOnCellular("http://100.64.0.1/final", ["--ip-type", "ipv6"])
        #expect(literal.report.failure?.reason == .noAddress && literal.report.hops.isEmpty)
    }

    @Test func dualStackUsesIPv6FirstAndAsksTheIPv6DNSServer() throws {
        let w = try world
        let (out, packets) = try w.capture {
            try w.fetch(["--interface", "wwan0", "--dns", "fd00:64::53", "http://dual.carrier.test/final"])
        }
        #expect(out.report.result?.finalStatus == 200, "\(out.stderr)")
        let hop = try #require(out.report.hops.first)
        // Both records come back (A and AAAA through the IPv6 server); the hop says its family.
        #expect(Set(hop.dnsAnswers ?? []) == ["100.64.0.1", "fd00:64::1"], "\(hop.dnsAnswers ?? [])")
        #expect(hop.family == "ipv6" && hop.remoteAddress == "fd00:64::1" && hop.localAddress == "fd00:64::5")
        let log = try w.dnsLog()
        #expect(log.contains("dual.carrier.test from fd00:64::5"), "\(log)")
        #expect(packets.isEmpty, "packets on wlan0: \(packets)")
    }

    @Test func happyEyeballsFallsBackToIPv4OnTheBoundInterface() throws {
        let w = try world
        // IPv6 replies from the carrier go nowhere: the IPv6 attempt gets no answer.
        let car = w.prefix + "car"
        #expect(
            try ProcessRunner.run(["ip", "-n", car, "-6", "route", "del", "fd00:64::5/128", "dev", "radio0"]).status
                == 0)
        defer { _ = try? ProcessRunner.run(["ip", "-n", car, "-6", "route", "add", "fd00:64::5/128", "dev", "radio0"]) }
        let (out, packets) = try w.capture {
            try w.fetch(["--interface", "wwan0", "--dns", "100.64.0.53", "http://dual.carrier.test/final"])
        }
        #expect(out.report.result?.finalStatus == 200, "\(out.stderr)")
        let hop = try #require(out.report.hops.first)
        #expect(hop.family == "ipv4" && hop.remoteAddress == "100.64.0.1" && hop.localAddress == "100.64.23.5")
        // Within curl's happy-eyeballs delay, not a connect timeout.
        #expect(hop.timings.totalMs < 2000, "\(hop.timings)")
        #expect(packets.isEmpty, "packets on wlan0: \(packets)")
    }

    @Test func aDNSServerOfAFamilyThePathLacksIsNotAsked() throws {
        let w = try world
        // wwan1 has IPv4 only: the IPv6 server is left out, the IPv4 one answers.
        let mixed = try w.fetch([
            "--interface", "wwan1", "--dns", "fd00:64::53,100.64.0.53", "http://mno.carrier.test/final"
        ])
        #expect(mixed.report.result?.finalStatus == 200 && mixed.report.hops.first?.family == "ipv4", "\(mixed.stderr)")
        let (only, packets) = try w.capture {
            try w.fetch(["--interface", "wwan1", "--dns", "fd00:64::53", "http://mno.carrier.test/final"])
        }
        #expect(only.report.failure?.reason == .dnsUnreachable, "\(only.report.failure?.message ?? "")")
        #expect(only.report.failure?.message.contains("no DNS server of the cellular path's address family") == true)
        #expect(packets.isEmpty, "packets on wlan0: \(packets)")
    }

    // MARK: bad input

    @Test(arguments: [
        (["http://mno.carrier.test/final\r\nX-Evil: 1"], FetchFailureReason.malformedURL),
        (["http://exa mple.test/"], .malformedURL),
        (["http://\(String(repeating: "a", count: 64)).carrier.test/"], .malformedURL),
        (
            ["http://\(Array(repeating: String(repeating: "b", count: 60), count: 1700).joined(separator: "."))/"],
            .malformedURL
        ),
        (["ftp://mno.carrier.test/file"], .nonHTTPScheme),
        (["--header", "X-A: b\rX-Evil: 1", "http://mno.carrier.test/final"], .invalidHeader)
    ])
    func badInputRejectedBeforeAnyPacket(args: [String], reason: FetchFailureReason) throws {
        let w = try world
        // Any DNS query or new connection from the client counts (late replies to earlier tests do not).
        let (out, packets) = try w.capture(
            on: "wwan0", filter: "src host 100.64.23.5 and (udp or tcp[tcpflags] & tcp-syn != 0)"
        ) { try w.fetchOnCellular(args[args.count - 1], Array(args.dropLast())) }
        #expect(out.report.failure?.reason == reason)
        #expect(out.report.hops.isEmpty)
        #expect(packets.isEmpty, "packets on wwan0: \(packets)")
    }
}
