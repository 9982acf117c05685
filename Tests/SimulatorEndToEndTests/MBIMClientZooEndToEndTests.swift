import CellpathCore
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// cellpath's own MBIM client on the zoo's MBIM profiles: FCC-locked modems (a USB EM7455 on
/// ModemManager's FCC-unlock list, a PCIe L860 that is not) refused with the FCC lock, what it
/// means and how to lift it, then usable once unlocked; an FN990 whose MBIMEx v3 another
/// client of mbim-proxy negotiated first, read and connected in the v3 layouts; and an FM350
/// (t7xx) whose link-local IPv6 address leaves the global one to SLAAC; DNS servers 0.0.0.0 and
/// `::` in an MBIM IP configuration left out, and refused when nothing else is left.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct MBIMClientZooEndToEndTests {
    /// Modem 0: EM7455 (1199:9079, on the list); 1: FN990 (MBIMEx v3); 2: L860 (8086:7560, PCIe).
    static var scenario: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems = (0 ..< 3).map { SimulatedModem(index: $0) }
        scenario.modems[0].device = .usbMBIMFCCLocked
        scenario.modems[1].device = .usbMBIMv3
        scenario.modems[2].device = .pcieIOSM
        return scenario
    }

    /// `fetch -m N` of the carrier's endpoint: its 404 (exit 65, checkNotFound) came over the
    /// bearer (from its IPv4 address, or its IPv6 one on a dual-stack bearer).
    private func expectFetchOverTheBearer(
        _ device: SimulatedDevice, modem: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let fetch = try device.cellpath(["fetch", "-m", "\(modem)", "--json", "http://mno.carrier.test/final"])
        #expect(fetch.status == 65, "\(fetch.stderr)", sourceLocation: sourceLocation)
        let json = try JSONValue.parse(fetch.stdout)
        #expect(json["error"]?["reason"]?.string == "checkNotFound", "\(fetch.stdout)", sourceLocation: sourceLocation)
        let local = json.hops.first?["local_address"]?.string ?? ""
        #expect(
            local.hasPrefix("100.64.") || local.hasPrefix("2001:db8:64:"), "\(fetch.stdout)",
            sourceLocation: sourceLocation)
    }

    @Test func fccLockedModemsAreRefusedWithTheRemedyThenWorkOnceUnlocked() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let listed = try JSONValue.parse(try device.cellpath(["modems", "--json"]).stdout)["modems"]?.array
            #expect(listed?[0]["radio"]?.string == "fcc-locked", "\(listed ?? [])")
            #expect(listed?[1]["radio"]?.string == "on")
            let table = try device.cellpath(["modems"]).stdout
            #expect(table.contains("fcc-locked"), "\(table)")

            // The EM7455: on ModemManager's list, the remedy names its script.
            let up = try device.cellpath(["bearer", "up", "-m", "0"])
            #expect(up.status == 69, "\(up.stderr)")
            #expect(up.stderr.contains("modem 0 (1199:9079) is FCC-locked"), "\(up.stderr)")
            #expect(up.stderr.contains("regulatory lock"), "\(up.stderr)")
            #expect(
                up.stderr.contains(
                    "sudo ln -s /usr/share/ModemManager/fcc-unlock.available.d/1199:9079 /etc/ModemManager/fcc-unlock.d/"
                ), "\(up.stderr)")
            #expect(up.stderr.contains("cellpath sim modem unlock-fcc"), "\(up.stderr)")
            let fetch = try device.cellpath(["fetch", "-m", "0", "--json", "http://mno.carrier.test/final"])
            #expect(fetch.status == 69, "\(fetch.stderr)")
            #expect(fetch.stdout.contains("is FCC-locked"), "\(fetch.stdout)")

            // The L860: not on this ModemManager's list, refused all the same (OperationNotAllowed).
            let l860 = try device.cellpath(["bearer", "up", "-m", "2"])
            #expect(l860.status == 69, "\(l860.stderr)")
            #expect(l860.stderr.contains("modem 2 (8086:7560) is FCC-locked"), "\(l860.stderr)")
            #expect(l860.stderr.contains("ships no unlock script for 8086:7560"), "\(l860.stderr)")

            for modem in [0, 2] {
                try device.sim("modem", "unlock-fcc", "--modem", "\(modem)")
                let unlocked = try device.cellpath(["bearer", "up", "-m", "\(modem)"])
                #expect(unlocked.status == 0, "modem \(modem): \(unlocked.stderr)")
                try expectFetchOverTheBearer(device, modem: modem)
                #expect(try device.cellpath(["bearer", "down", "-m", "\(modem)"]).status == 0)
            }
        }
    }

    @Test func mbimexV3NegotiatedThroughTheProxyFirstIsReadInItsLayouts() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let before = try JSONValue.parse(try device.cellpath(["modems", "--json"]).stdout)
            let port = try #require(before["modems"]?.array?[1]["device"]?.string)
            // Another client of mbim-proxy (as ModemManager does) negotiates MBIMEx v3 first.
            let negotiated = try device.run([
                "mbimcli", "-p", "-d", port, "--device-open-ms-mbimex-v3", "--query-radio-state"
            ])
            #expect(negotiated.status == 0, "\(negotiated.stderr)")

            let shown = try device.cellpath(["modems", "show", "1", "--json", "--verbose-full"])
            #expect(shown.status == 0, "\(shown.stderr)")
            let modem = try JSONValue.parse(shown.stdout)
            let sim = Self.scenario.modems[1].sim
            #expect(modem["sim"]?["state"]?.string == "ready", "\(shown.stdout)")
            #expect(modem["sim"]?["iccid"]?.string == sim?.iccid, "\(shown.stdout)")
            #expect(modem["sim"]?["imsi"]?.string == sim?.imsi, "\(shown.stdout)")
            #expect(modem["registration"]?["state"]?.string == "home", "\(shown.stdout)")
            #expect(modem["packet_service"]?.string == "attached", "\(shown.stdout)")

            let up = try device.cellpath(["bearer", "up", "-m", "1"])
            #expect(up.status == 0, "\(up.stderr)")
            #expect(try device.status()["modems"]?.array?[1]["bearer"]?.string == "connected")
            try expectFetchOverTheBearer(device, modem: 1)
            #expect(try device.cellpath(["bearer", "down", "-m", "1"]).status == 0)
            #expect(try device.status()["modems"]?.array?[1]["bearer"]?.string == "disconnected")
        }
    }

    @Test func t7xxLinkLocalIPv6BearerTakesItsAddressBySLAACAndFetchesOverIt() throws {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0)]
        scenario.modems[0].device = .pcieT7xx
        scenario.modems[0].ipType = .ipv6
        try SimulatedDevice.with(scenario, connect: false) { device in
            try device.sim("modem", "unlock-fcc", "--modem", "0")
            let up = try device.cellpath(["bearer", "up", "-m", "0", "--ip-type", "ipv6", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            let address = try #require(try JSONValue.parse(up.stdout)["ipv6_address"]?.string, "\(up.stdout)")
            #expect(address.hasPrefix("2001:db8:64:"), "the global address of the router advertisement's /64")
            let held = try device.run(["ip", "-6", "addr", "show", "dev", "wwan0"]).stdout
            #expect(held.contains("inet6 \(address)/64 scope global"), "\(held)")
            #expect(!held.contains("fe80::"), "the link-local address SLAAC needed is gone: \(held)")
            // Router advertisements were accepted for the wait only, never their default route.
            let acceptRA = try device.run(["cat", "/proc/sys/net/ipv6/conf/wwan0/accept_ra"]).stdout
            #expect(acceptRA == "0\n")
            #expect(!(try device.run(["ip", "-6", "route"]).stdout.contains("proto ra")))

            let (fetch, packets) = try device.capture(on: ["wlan0"]) {
                try device.cellpath(["fetch", "-m", "0", "--json", "http://mno.carrier.test/final"])
            }
            #expect(fetch.status == 65, "\(fetch.stderr)")
            #expect(try JSONValue.parse(fetch.stdout).hops.first?["local_address"]?.string == address)
            #expect(packets["wlan0"] == [], "packets on wlan0: \(packets["wlan0"] ?? [])")

            #expect(try device.cellpath(["bearer", "down", "-m", "0"]).status == 0)
            let after = try device.run(["ip", "-6", "addr", "show", "dev", "wwan0"]).stdout
            #expect(!after.contains("inet6"), "wwan0 after bearer down: \(after)")
        }
    }

    @Test func unspecifiedDNSServersOfTheModemAreLeftOutAndRefusedWhenNoneIsLeft() throws {
        var scenario = Scenario.builtIn
        scenario.modems = (0 ..< 2).map { SimulatedModem(index: $0) }
        for modem in 0 ..< 2 { scenario.modems[modem].ipType = .ipv4v6 }
        scenario.modems[0].reportedIP = ReportedIPConfiguration(dnsServers: ["0.0.0.0", "::", "100.64.0.53"])
        scenario.modems[1].reportedIP = ReportedIPConfiguration(dnsServers: ["0.0.0.0", "::"])
        try SimulatedDevice.with(scenario, connect: false) { device in
            let up = try device.cellpath(["bearer", "up", "-m", "0", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            #expect(try JSONValue.parse(up.stdout)["dns_servers"]?.array?.compactMap(\.string) == ["100.64.0.53"])
            #expect(up.stderr.contains("modem 0 reports 0.0.0.0 as a DNS server: left out (unspecified)"))
            #expect(up.stderr.contains("modem 0 reports :: as a DNS server: left out (unspecified)"))
            try expectFetchOverTheBearer(device, modem: 0)
            #expect(try device.cellpath(["bearer", "down", "-m", "0"]).status == 0)

            let none = try device.cellpath(["bearer", "up", "-m", "1"])
            #expect(none.status == 76, "\(none.stderr)")
            #expect(
                none.stderr.contains(
                    "modem 1 reports no usable DNS server for its bearer: 0.0.0.0 (unspecified), :: (unspecified)"),
                "\(none.stderr)")
            #expect(try device.status()["modems"]?.array?[1]["bearer"]?.string == "disconnected")
        }
    }
}
