import CellpathCore
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// IPv6 and dual-stack bearers of the simulated modems as the real mbimcli and qmicli see them:
/// the grant is the requested families intersected with the network's, an empty one is refused
/// with 3GPP cause 50/51, and the IP configuration carries the carrier's IPv6 plan.
@Suite("IPv6 bearers checked by mbimcli and qmicli", .serialized, .ownThreads)
struct IPv6ClientTests {
    static func modem(_ protocol: ModemProtocol, _ ipType: BearerIPType, index: Int = 0) -> SimulatedModem {
        var modem = SimulatedModem(index: index)
        modem.protocol = `protocol`
        modem.ipType = ipType
        return modem
    }

    /// Connects with mbimcli (`ip-type=TYPE`) and returns the connect output, the families the
    /// data plane was opened for and the IP configuration (after which mbimcli closes the device).
    private func mbimConnect(
        _ h: ModemHarness, _ ipType: String
    ) throws -> (connect: ProcessResult, opened: BearerIPType?, ip: ProcessResult?) {
        let c = try h.mbimcli("--connect=access-string=internet,ip-type=\(ipType)", "--no-close")
        let opened = h.bearerNetwork.ipType(modemIndex: h.device.index)
        guard c.status == 0, let trid = field("TRID", in: c.stdout).flatMap({ Int($0) }) else {
            return (c, opened, nil)
        }
        return (c, opened, try h.mbimcli("--query-ip-configuration", "--no-open=\(trid)"))
    }

    @Test func mbimIPv6OnlyNetworkReportsTheIPv6Configuration() throws {
        let h = try ModemHarness(Self.modem(.mbim, .ipv6, index: 1), index: 1)
        let (c, opened, ip) = try mbimConnect(h, "ipv4v6")
        #expect(c.status == 0, "\(c.stderr)")
        #expect(field("IP type", in: c.stdout) == "ipv6", "\(c.stdout)")
        #expect(opened == .ipv6)
        let out = try #require(ip).stdout
        #expect(out.contains("2001:db8:64:11::2/64"), "\(out)")
        #expect(out.contains("2001:db8:64:11::1"))
        #expect(out.contains("2001:db8:64::53"))
        #expect(!out.contains("100.64.23.11"))
        #expect(!out.contains("100.64.0.53"))
    }

    @Test func mbimDualStackReportsBothFamilies() throws {
        let h = try ModemHarness(Self.modem(.mbim, .ipv4v6))
        let (c, opened, ip) = try mbimConnect(h, "ipv4v6")
        #expect(c.status == 0, "\(c.stderr)")
        #expect(field("IP type", in: c.stdout) == "ipv4v6", "\(c.stdout)")
        #expect(opened == .ipv4v6)
        let out = try #require(ip).stdout
        for text in [
            "100.64.23.10/32", "100.64.0.1", "100.64.0.53", "2001:db8:64:10::2/64", "2001:db8:64:10::1",
            "2001:db8:64::53"
        ] {
            #expect(out.contains(text), "\(text) missing in \(out)")
        }
    }

    @Test func mbimAskingIPv4OnADualStackNetworkGetsIPv4Only() throws {
        let h = try ModemHarness(Self.modem(.mbim, .ipv4v6))
        let (c, opened, ip) = try mbimConnect(h, "ipv4")
        #expect(c.status == 0, "\(c.stderr)")
        #expect(opened == .ipv4)
        let out = try #require(ip).stdout
        #expect(out.contains("100.64.23.10/32"))
        #expect(!out.contains("2001:db8"), "\(out)")
    }

    @Test(arguments: [(BearerIPType.ipv4, "ipv6", 50), (.ipv6, "ipv4", 51)])
    func mbimEmptyIntersectionIsRefusedWithTheCause(network: BearerIPType, asked: String, cause: Int) throws {
        let h = try ModemHarness(Self.modem(.mbim, network))
        let c = try h.mbimcli("--connect=access-string=internet,ip-type=\(asked)")
        #expect(c.status != 0)
        #expect(c.stderr.contains("Failure"), "\(c.stderr)")
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        // The NW error of the refusal: what libmbim reads from the failed connect's information buffer.
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 1))
        _ = port.receive()
        port.send(MBIMTestFrames.connect(tid: 2, ipType: asked == "ipv6" ? 2 : 1))
        let done = try #require(mbimMessages(port.receive()).first)
        #expect(readLE32(done, 40) == 2)  // status FAILURE
        #expect(readLE32(Array(done[48...]), 32) == UInt32(cause))  // NwError
    }

    @Test func qmiIPv6SessionReportsTheIPv6Settings() throws {
        let h = try ModemHarness(Self.modem(.qmi, .ipv6))
        let start = try h.qmicli("--wds-start-network=apn=internet,ip-type=6", "--client-no-release-cid")
        #expect(start.status == 0, "\(start.stderr)")
        let cid = try #require(field("CID", in: start.stdout))
        #expect(h.bearerNetwork.ipType(modemIndex: 0) == .ipv6)
        let settings = try h.qmicli("--wds-get-current-settings", "--client-cid=\(cid)", "--client-no-release-cid")
        #expect(settings.status == 0, "\(settings.stderr)")
        #expect(field("IP Family", in: settings.stdout) == "IPv6", "\(settings.stdout)")
        #expect(field("IPv6 address", in: settings.stdout) == "2001:db8:64:10::2/64")
        #expect(field("IPv6 gateway address", in: settings.stdout) == "2001:db8:64:10::1/64")
        #expect(field("IPv6 primary DNS", in: settings.stdout) == "2001:db8:64::53")
        #expect(field("IPv4 address", in: settings.stdout) == nil)
    }

    @Test func qmiDualStackIsTwoSessions() throws {
        let h = try ModemHarness(Self.modem(.qmi, .ipv4v6))
        let v4 = try h.qmicli("--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid")
        #expect(v4.status == 0, "\(v4.stderr)")
        #expect(h.bearerNetwork.ipType(modemIndex: 0) == .ipv4)
        let v6 = try h.qmicli("--wds-start-network=apn=internet,ip-type=6", "--client-no-release-cid")
        #expect(v6.status == 0, "\(v6.stderr)")
        #expect(h.bearerNetwork.ipType(modemIndex: 0) == .ipv4v6)
        let cid4 = try #require(field("CID", in: v4.stdout)), cid6 = try #require(field("CID", in: v6.stdout))
        #expect(cid4 != cid6)
        let s4 = try h.qmicli("--wds-get-current-settings", "--client-cid=\(cid4)", "--client-no-release-cid")
        #expect(field("IPv4 address", in: s4.stdout) == "100.64.23.10", "\(s4.stdout)")
        #expect(field("IPv4 primary DNS", in: s4.stdout) == "100.64.0.53")
        let s6 = try h.qmicli("--wds-get-current-settings", "--client-cid=\(cid6)", "--client-no-release-cid")
        #expect(field("IPv6 address", in: s6.stdout) == "2001:db8:64:10::2/64", "\(s6.stdout)")
        // Ending the IPv6 session leaves the IPv4 one.
        let handle6 = try #require(field("Packet data handle", in: v6.stdout))
        let stop = try h.qmicli("--wds-stop-network=\(handle6)", "--client-cid=\(cid6)")
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(h.bearerNetwork.ipType(modemIndex: 0) == .ipv4)
    }

    @Test func qmiIPv6OnADualStackNetworkGrantsIPv6Only() throws {
        let h = try ModemHarness(Self.modem(.qmi, .ipv4v6))
        let v6 = try h.qmicli("--wds-start-network=apn=internet,ip-type=6", "--client-no-release-cid")
        #expect(v6.status == 0, "\(v6.stderr)")
        #expect(h.bearerNetwork.ipType(modemIndex: 0) == .ipv6)
    }

    @Test(arguments: [(BearerIPType.ipv4, "6", 50), (.ipv6, "4", 51)])
    func qmiEmptyIntersectionEndsTheCallWithTheCause(network: BearerIPType, family: String, cause: Int) throws {
        let h = try ModemHarness(Self.modem(.qmi, network))
        let start = try h.qmicli("--wds-start-network=apn=internet,ip-type=\(family)")
        #expect(start.status != 0)
        #expect(start.stderr.contains("CallFailed"), "\(start.stderr)")
        #expect(
            start.stderr.contains(
                "verbose call end reason (6,\(cause)): [3gpp] \(cause == 50 ? "ipv4" : "ipv6")-only-allowed"),
            "\(start.stderr)")
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
    }
}
