import CellpathCore
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// `cellpath bearer up` against simulated modems that report an IP configuration cellpath must
/// not apply (scenario `reportedIP`): the refusal is clear, and the bearer cellpath connected
/// is taken down again with nothing left on its interface.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct HostileIPConfigurationEndToEndTests {
    /// Four modems, each reporting one hostile setting: MBIM and QMI both.
    static var scenario: Scenario {
        var modems = (0 ..< 4).map { SimulatedModem(index: $0) }
        modems[0].reportedIP = ReportedIPConfiguration(ipv4Address: "192.0.2.50")  // in wlan0's 192.0.2.0/24
        modems[1].protocol = .qmi
        modems[1].reportedIP = ReportedIPConfiguration(dnsServers: ["0.0.0.0", "127.0.0.53"])
        modems[2].ipType = .ipv6
        modems[2].reportedIP = ReportedIPConfiguration(ipv6Address: "fe80::2")
        modems[3].protocol = .qmi
        modems[3].reportedIP = ReportedIPConfiguration(mtu: 65535)
        return Scenario(modems: modems)
    }

    /// What a refused bring-up must leave: the modem's bearer down, no address on its interface.
    private func expectNothingLeft(_ device: SimulatedDevice, modem index: Int) throws {
        #expect(try device.status()["modems"]?.array?[index]["bearer"]?.string == "disconnected")
        let addresses = try device.run(["ip", "addr", "show", "dev", "wwan\(index)"]).stdout
        #expect(!addresses.contains("inet"), "wwan\(index) after the refusal: \(addresses)")
    }

    @Test func hostileConfigurationsAreRefusedOrMadeSafe() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let clash = try device.cellpath(["bearer", "up", "-m", "0"])
            #expect(clash.status == 69, "\(clash.stderr)")
            #expect(
                clash.stderr.contains("modem 0's bearer address 192.0.2.50 lies in wlan0's network 192.0.2.23/24"),
                "\(clash.stderr)")
            try expectNothingLeft(device, modem: 0)

            let dns = try device.cellpath(["bearer", "up", "-m", "1"])
            #expect(dns.status == 76, "\(dns.stderr)")
            #expect(
                dns.stderr.contains(
                    "modem 1 reports no usable DNS server for its bearer: 0.0.0.0 (unspecified), 127.0.0.53 (loopback)"),
                "\(dns.stderr)")
            try expectNothingLeft(device, modem: 1)
            // A check refused the same way: its own undo of the bearer is no drop by the network.
            let check = try device.cellpath(["subscriber-check", "-m", "1", "--direct"])
            #expect(check.status == 76, "\(check.stderr)")
            #expect(!check.stderr.contains("the network dropped the bearer"), "\(check.stderr)")
            try expectNothingLeft(device, modem: 1)

            let linkLocal = try device.cellpath(["bearer", "up", "-m", "2", "--ip-type", "ipv6"])
            #expect(linkLocal.status == 76, "\(linkLocal.stderr)")
            #expect(
                linkLocal.stderr.contains(
                    "modem 2 gave only a link-local IPv6 address (fe80::2) and no router advertisement came on wwan2"),
                "\(linkLocal.stderr)")
            #expect(try device.status()["modems"]?.array?[2]["bearer"]?.string == "disconnected")

            let mtu = try device.cellpath(["bearer", "up", "-m", "3"])
            #expect(mtu.status == 0, "\(mtu.stderr)")
            #expect(
                mtu.stderr.contains("modem 3 reports an MTU of 65535 for its bearer: clamped to 1500"), "\(mtu.stderr)")
            #expect(try device.run(["ip", "link", "show", "dev", "wwan3"]).stdout.contains(" mtu 1500 "))
            #expect(try device.cellpath(["bearer", "down", "-m", "3"]).status == 0)
        }
    }
}
