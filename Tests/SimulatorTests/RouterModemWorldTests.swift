import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// A router-mode modem (Huawei HiLink) in a real world: the device sees an Ethernet device
/// `usbN`, leases 192.168.8.x from the modem's DHCP server, and its traffic reaches the carrier
/// NATed onto the SIM's bearer address, so the carrier identifies that modem's SIM.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct RouterModemWorldTests {
    /// What udhcpc runs on a lease: the address and a default route (worse than Wi-Fi's).
    static let dhcpScript = """
        #!/bin/sh
        case "$1" in
        deconfig) ip link set "$interface" up; ip -4 addr flush dev "$interface" ;;
        bound|renew) ip -4 addr flush dev "$interface"; ip -4 addr add "$ip/$mask" dev "$interface"
                     ip -4 route replace default via "${router%% *}" dev "$interface" metric 800 ;;
        esac

        """

    private func run(_ arguments: [String]) throws -> ProcessResult { try WorldFixture.output(arguments) }

    @Test func aRouterModemLeasesAnAddressAndNATsOntoItsSIMsBearer() throws {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0), SimulatedModem(index: 1)]
        scenario.modems[1].device = .routerMode
        let script = "/tmp/cellpath-udhcpc-\(getpid()).sh"
        let fd = open(script, O_WRONLY | O_CREAT | O_TRUNC, 0o700)
        _ = Array(Self.dhcpScript.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        defer { unlink(script) }
        var worldPrefix = ""
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            worldPrefix = prefix
            let ue = prefix + "ue"
            let status = try SimulatedWorld.status(prefix: prefix)
            #expect(status.modems[1].interface == "usb1")
            #expect(status.modems[1].bearer == .connected && status.modems[1].address == "100.64.23.11")
            #expect(status.modems[0].bearer == .disconnected)
            #expect(status.namespaces.contains(prefix + "modem1"))
            #expect(throws: CellpathError.self) { try SimulatedWorld.bearer(connect: false, modem: 1, prefix: prefix) }
            let link = try run(["ip", "-n", ue, "link", "show", "usb1"]).stdout
            #expect(link.contains("link/ether") && !link.contains("NOARP"), "\(link)")

            let lease = try run([
                "ip", "netns", "exec", ue, "udhcpc", "-i", "usb1", "-n", "-q", "-f",
                "-t", "5", "-T", "1",
                "-s", script
            ])
            #expect(lease.status == 0, "\(lease.stdout) \(lease.stderr)")
            #expect((lease.stdout + lease.stderr).contains("lease of 192.168.8."), "\(lease.stdout) \(lease.stderr)")
            let address = try run(["ip", "-n", ue, "-4", "-o", "addr", "show", "usb1"]).stdout
            #expect(address.contains("inet 192.168.8."), "\(address)")

            let walk = try CheckWalk(prefix: prefix)
            #expect(try walk.matches(SimulatedSIM(index: 1).msisdn, interface: "usb1") == true)
            #expect(try walk.matches(SimulatedSIM(index: 0).msisdn, interface: "usb1") == false)
            let log = try SimulatedWorld.requestLog(prefix: prefix)
            #expect(log.contains { $0.contains("\"100.64.23.11\"") && $0.contains(prefix + "carrier") })
            #expect(try SimulatedWorld.status(prefix: prefix).modems[1].counters.uplink.relayedPackets > 0)
            // The host's sleep does not end the router's own connection.
            _ = try SimulatedWorld.lifecycle(.suspend, prefix: prefix)
            #expect(try SimulatedWorld.status(prefix: prefix).modems[1].bearer == .connected)
            _ = try SimulatedWorld.lifecycle(.resume, prefix: prefix)
        }
        // This world's router namespace went with it (other worlds may be up meanwhile).
        #expect(try !run(["ip", "netns", "list"]).stdout.contains(worldPrefix + "modem1"))
    }

    @Test func modemManagerManagesTheOtherModemsBesideARouterModem() throws {
        var scenario = Scenario.builtIn
        scenario.modems = [SimulatedModem(index: 0), SimulatedModem(index: 1)]
        scenario.modems[1].device = .routerMode
        scenario.modemManager = true
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            let env = ["DBUS_SYSTEM_BUS_ADDRESS": RunDirectory(prefix: prefix).busAddress, "PATH": "/usr/bin:/bin"]
            let list = try ProcessRunner.run(["mmcli", "-L"], environment: env)
            let modems = list.stdout.split(separator: "\n")
                .filter { $0.contains("/org/freedesktop/ModemManager1/Modem/") }
            #expect(modems.count == 1, "\(list.stdout)")
            #expect(try SimulatedWorld.status(prefix: prefix).modems[1].bearer == .connected)
        }
    }
}
