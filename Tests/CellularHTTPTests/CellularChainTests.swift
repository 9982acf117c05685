import CellpathCore
import CellularHTTP
import FoundationEssentials
import Glibc
import Testing
import TestSupport
import Workflow

/// Everything that needs the netns world: leaks, fail-closed matrix, redirect conformance.
@Suite(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .serialized, .world)
struct CellularChainTests {
    var world: World { get throws { try #require(World.current) } }

    // MARK: leak test

    @Test func captureOnWlan0SeesALeakyClient() throws {
        // Control: binding only the source address leaks through the default route; the capture must see it.
        let (_, packets) = try world.capture {
            try world.ueRun(["curl", "-s", "-m", "1", "--interface", "100.64.23.5", "http://100.64.0.1/final"])
        }
        #expect(packets.contains { $0.contains("IP 100.64.23.5.") && $0.contains(" > 100.64.0.1.80: Flags [S]") }, "\(packets)")
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
        let (_, packets) = try w.capture(on: "wwan0", filter: "src host 100.64.23.5 and (udp or tcp[tcpflags] & tcp-syn != 0)") {
            try w.fetchOnCellular("http://mno.carrier.test/final")
        }
        #expect(packets.contains { $0.contains("100.64.0.53.53") } && packets.contains { $0.contains("100.64.0.1.80: Flags [S]") })
    }

    @Test func cancellationStopsAHangingHop() throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test/slow?s=4", ["--cancel-after", "300"])
        #expect(out.report.failure?.reason == .cancelled)
        // The chain's own clock, without the probe's start-up: cancelled at 300 ms, not after the server's 4 s.
        #expect(out.report.totalMs < 1000, "\(out.report.totalMs) ms")
    }

    // MARK: fail-closed matrix

    /// Runs the probe with a capture on wlan0 and checks the failure reason and silence.
    private func expectFailure(_ reason: FetchFailureReason, _ args: [String], preload: String? = nil,
                               sourceLocation: SourceLocation = #_sourceLocation) throws -> FetchReport {
        let w = try world
        let (out, packets) = try w.capture { try w.fetch(args, preload: preload) }
        #expect(out.status != 0, sourceLocation: sourceLocation)
        #expect(out.report.failure?.reason == reason, "\(String(describing: out.report.failure))", sourceLocation: sourceLocation)
        #expect(packets.isEmpty, "packets on wlan0: \(packets)", sourceLocation: sourceLocation)
        return out.report
    }

    @Test func interfaceMissing() throws {
        let r = try expectFailure(.noSuchInterface, ["--interface", "wwan9", "--ipv4", "100.64.23.5", "--dns", "100.64.0.53",
                                                     "http://mno.carrier.test/final"])
        #expect(r.hops.isEmpty)
    }

    @Test func interfaceWithoutAddress() throws {
        let r = try expectFailure(.addressGone, ["--interface", "wwan2", "--ipv4", "100.64.23.9", "--dns", "100.64.0.53",
                                                 "http://mno.carrier.test/final"])
        #expect(r.hops.isEmpty)
        // Discovering the path from an interface without address fails the same way: nothing sent.
        _ = try expectFailure(.noAddress, ["--interface", "wwan2", "--dns", "100.64.0.53", "http://mno.carrier.test/final"])
    }

    @Test func addressRemovedMidChain() throws {
        let w = try world
        try w.writeHook("deladdr", "ip netns exec \(w.ue) ip addr del 100.64.23.6/32 dev wwan1")
        defer { _ = try? w.ueRun(["ip", "addr", "add", "100.64.23.6/32", "dev", "wwan1"]) }
        let r = try expectFailure(.addressGone, ["--interface", "wwan1", "--dns", "100.64.0.53", "--hop-timeout", "2",
                                                 "http://mno.carrier.test/hook?name=deladdr"])
        #expect(r.hops.count == 1)
    }

    @Test func interfaceDeletedMidChain() throws {
        let w = try world
        try w.writeHook("dellink", "ip netns exec \(w.ue) ip link del wwan3")
        let r = try expectFailure(.noSuchInterface, ["--interface", "wwan3", "--dns", "100.64.0.53", "--hop-timeout", "2",
                                                     "http://mno.carrier.test/hook?name=dellink"])
        #expect(r.hops.count == 1)
    }

    @Test func interfaceDown() throws {
        let w = try world
        try w.ueRun(["ip", "link", "set", "wwan1", "down"])
        defer { _ = try? w.ueRun(["ip", "link", "set", "wwan1", "up"]) }
        _ = try expectFailure(.interfaceDown, ["--interface", "wwan1", "--ipv4", "100.64.23.6", "--dns", "100.64.0.53",
                                               "http://mno.carrier.test/final"])
    }

    @Test func dnsServerOnTheWiFiSideIsStillAskedOnlyThroughWwan0() throws {
        // 192.0.2.1 is reachable only through wlan0; the bound DNS socket must not get there.
        _ = try expectFailure(.dnsUnreachable, ["--interface", "wwan0", "--dns", "192.0.2.1", "--hop-timeout", "2",
                                                "http://mno.carrier.test/final"])
    }

    @Test func carrierDNSUnreachable() throws {
        _ = try expectFailure(.dnsUnreachable, ["--interface", "wwan0", "--dns", "100.64.0.54", "--hop-timeout", "2",
                                                "http://mno.carrier.test/final"])
    }

    @Test func nameUnknownToCarrierDNS() throws {
        _ = try expectFailure(.dnsNoAnswer, ["--interface", "wwan0", "--dns", "100.64.0.53", "http://nx.carrier.test/final"])
    }

    @Test(arguments: ["refuse", "ignore"])
    func deviceBindRefused(mode: String) throws {
        // "refuse": SO_BINDTODEVICE fails with EPERM; "ignore": it claims success but does nothing,
        // which only the getsockopt verification catches. Both for DNS and for an address literal.
        let preload = try buildPreloadShim(mode)
        _ = try expectFailure(.bindRefused, ["--interface", "wwan0", "--dns", "100.64.0.53", "http://mno.carrier.test/final"],
                              preload: preload)
        _ = try expectFailure(.bindRefused, ["--interface", "wwan0", "--dns", "100.64.0.53", "http://100.64.0.1/final"],
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
            guard let r = try? ProcessRunner.run([compiler, "-shared", "-fPIC", "-o", lib, src, "-ldl"]) else { continue }
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
        #expect(out.report.hops.map(\.url) == ["http://mno.carrier.test/dir/rel", "http://mno.carrier.test/dir/step2?x=1&y=a%20b",
                                               "http://mno.carrier.test/final"])
        #expect(try w.serverRequests(since: mark).map { $0["path"] } == [.string("/dir/rel"), .string("/dir/step2?x=1&y=a%20b"), .string("/final")])
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

    @Test func cookiesCarriedAndRedacted() throws {
        let w = try world
        let mark = try w.serverLogMark()
        let out = try w.fetchOnCellular("http://mno.carrier.test/cookie/set")
        #expect(out.report.result?.finalStatus == 200)
        let reqs = try w.serverRequests(since: mark)
        try #require(reqs.count >= 2)
        #expect(reqs[1]["cookie"] == .string("sid=s3cr3t-cookie"))
        let json = try w.ueRun([World.probe, "--interface", "wwan0", "--dns", "100.64.0.53", "http://mno.carrier.test/cookie/set"]).stdout
        #expect(!json.contains("s3cr3t-cookie") && json.contains("sid=[redacted]"))
        #expect(!json.contains("c0de-s3cret"))
        let full = try w.ueRun([World.probe, "--full", "--interface", "wwan0", "--dns", "100.64.0.53", "http://mno.carrier.test/cookie/set"]).stdout
        #expect(full.contains("s3cr3t-cookie") && full.contains("c0de-s3cret"))
    }

    @Test(arguments: [(301, "GET", ""), (302, "GET", ""), (303, "GET", ""), (307, "POST", "a=1"), (308, "POST", "a=1")])
    func redirectMethodRules(status: Int, method: String, body: String) throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test/status/\(status)", ["--method", "POST", "--data", "a=1"])
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
        #expect(try w.serverRequests(since: mark).count == 10)
    }

    @Test(arguments: ["/loop", "/loop-a"])
    func redirectLoop(path: String) throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test\(path)")
        #expect(out.report.failure?.reason == .redirectLoop)
        #expect(out.report.hops.count <= 3)
    }

    @Test func selfRedirectThatSetsACookieIsNoLoop() throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test/self-cookie")
        #expect(out.report.result?.finalStatus == 200 && out.report.hops.count == 2)
    }

    @Test func downgradeReportedAndRefusedWhenStrict() throws {
        let w = try world
        let lax = try w.fetchOnCellular("https://api.truid.test/downgrade")
        #expect(lax.report.result?.finalStatus == 200)
        #expect(lax.report.hops.map(\.downgrade) == [false, true])
        try #require(lax.report.hops.count == 2)
        #expect(lax.report.hops[0].tlsVersion?.hasPrefix("TLSv1.") == true && lax.report.hops[1].tlsVersion == nil)
        #expect(lax.stderr.contains("DOWNGRADE"))
        let strict = try w.fetchOnCellular("https://api.truid.test/downgrade", ["--strict"])
        #expect(strict.report.failure?.reason == .downgradeRefused && strict.report.hops.count == 1)
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
        #expect(hop.report.totalMs < 2000 && total.report.totalMs < 2000, "\(hop.report.totalMs) ms, \(total.report.totalMs) ms")
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
        let out = try w.fetchOnCellular("http://mno.carrier.test/empty-path",
                                        ["--header", "Authorization: Bearer tok-SECRET", "--header", "X-Trace: 1", "--operator", "00101"])
        #expect(out.report.result?.finalStatus == 200)
        let reqs = try w.serverRequests(since: mark)
        try #require(reqs.count == 3)
        func header(_ i: Int, _ name: String) -> JSONValue? {
            reqs[i]["headers"]?[name]
        }
        #expect(header(0, "authorization") == .string("Bearer tok-SECRET"))
        #expect(header(1, "authorization") == nil && header(2, "authorization") == nil)
        #expect((0..<3).allSatisfy { header($0, "x-tru-ops") == .string("00101") && header($0, "x-trace") == .string("1") })
        #expect((0..<3).allSatisfy { header($0, "user-agent") == .string("cellpath/\(CellpathVersion.current)") })
        #expect(out.report.hops.first?.requestHeaders.contains(HTTPHeader("Authorization", "Bearer [redacted]")) == true)
    }

    @Test func tlsFailsWithWrongCA() throws {
        let w = try world
        let out = try w.fetch(["--interface", "wwan0", "--dns", "100.64.0.53", "--cacert", w.workdir + "/wrong-ca.pem",
                               "https://api.truid.test/final"])
        #expect(out.report.failure?.reason == .tlsFailure)
    }

    @Test func stopAtRedirectURLKeepsQueryAndFragment() throws {
        let out = try world.fetchOnCellular("http://mno.carrier.test/stop", ["--stop-at", "https://app.example.test/", "--full"])
        #expect(out.status == 0 && out.report.hops.count == 1)
        #expect(out.report.result?.stoppedAt == "https://app.example.test/callback?check_id=chk-123&code=c0de-s3cret#frag")
        let redacted = try world.fetchOnCellular("http://mno.carrier.test/stop", ["--stop-at", "https://app.example.test/"])
        #expect(redacted.report.result?.stoppedAt == "https://app.example.test/callback?check_id=chk-123&code=[redacted]#frag")
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
        #expect(v6.report.hops.first?.localAddress == "fd00:64::5" && v6.report.hops.first?.remoteAddress == "fd00:64::1")
        let v4 = try w.fetchOnCellular("http://dual.carrier.test/final", ["--ip-type", "ipv4"])
        #expect(v4.report.hops.first?.localAddress == "100.64.23.5" && v4.report.hops.first?.dnsAnswers == ["100.64.0.1"])
        #expect(try w.serverRequests(since: mark).map { $0["client"] } == [.string("fd00:64::5"), .string("100.64.23.5")])
        // A dual-stack name on a v4-only bearer (wwan1): only the A record is used.
        let v4only = try w.fetch(["--interface", "wwan1", "--dns", "100.64.0.53", "http://dual.carrier.test/final"])
        #expect(v4only.report.result?.finalStatus == 200 && v4only.report.hops.first?.dnsAnswers == ["100.64.0.1"])
        let none = try w.fetchOnCellular("http://mno.carrier.test/final", ["--ip-type", "ipv6"])
        #expect(none.report.failure?.reason == .dnsNoAnswer)
        let literal = try w.fetchOnCellular("http://100.64.0.1/final", ["--ip-type", "ipv6"])
        #expect(literal.report.failure?.reason == .noAddress && literal.report.hops.isEmpty)
    }

    // MARK: bad input

    @Test(arguments: [
        (["http://mno.carrier.test/final\r\nX-Evil: 1"], FetchFailureReason.malformedURL),
        (["http://exa mple.test/"], .malformedURL),
        (["ftp://mno.carrier.test/file"], .nonHTTPScheme),
        (["--header", "X-A: b\rX-Evil: 1", "http://mno.carrier.test/final"], .invalidHeader),
    ])
    func badInputRejectedBeforeAnyPacket(args: [String], reason: FetchFailureReason) throws {
        let w = try world
        // Any DNS query or new connection from the client counts (late replies to earlier tests do not).
        let (out, packets) = try w.capture(on: "wwan0", filter: "src host 100.64.23.5 and (udp or tcp[tcpflags] & tcp-syn != 0)") { try w.fetchOnCellular(args[args.count - 1], Array(args.dropLast())) }
        #expect(out.report.failure?.reason == reason)
        #expect(out.report.hops.isEmpty)
        #expect(packets.isEmpty, "packets on wwan0: \(packets)")
    }
}
