import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// The QMI device profiles' data path in a world, driven with qmicli and ip as a host does: the
/// Quectel EC25's raw-ip firmware behind a qmi_wwan still in 802.3 mode loses every packet until
/// `qmi/raw_ip` is aligned (only while the interface is down), and the RM500Q's QMAP session
/// flows on the `qmimux0` device its host adds, never on the master. libqmi's qmi-network aligns
/// the kernel with the firmware, as on hardware.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct QMIDataFormatEndToEndTests {
    private static var scenario: Scenario {
        var scenario = Scenario.builtIn
        var ec25 = SimulatedModem(index: 0)
        ec25.protocol = .qmi
        ec25.device = .usbQMIRawIP
        var rm500q = SimulatedModem(index: 1)
        rm500q.protocol = .qmi
        rm500q.device = .usbQMIQMAP
        scenario.modems = [ec25, rm500q]
        return scenario
    }

    /// A host tool that must succeed; its stdout.
    @discardableResult
    private func tool(_ arguments: [String]) throws -> String {
        let result = try ProcessRunner.run(arguments, environment: SimulatedDevice.path)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result.stdout
    }

    private func qmicli(_ port: String, _ arguments: String...) throws -> String {
        try tool(["qmicli", "-d", port, "--device-open-qmi"] + arguments)
    }

    /// The value after `label` on the first line of qmicli output that has it, unquoted.
    private func field(_ text: String, after label: String) -> String? {
        guard let line = text.split(separator: "\n").first(where: { $0.contains(label) }) else { return nil }
        guard let value = line.split(separator: ":", maxSplits: 1).dropFirst().first else { return nil }
        return String(value.filter { $0 != "'" && $0 != " " })
    }

    /// Gives `interface` the bearer's address and a default route, and sets it up.
    private func configure(_ device: SimulatedDevice, _ interface: String, address: String, metric: Int) throws {
        try tool(["ip", "-n", device.ue, "addr", "replace", "\(address)/32", "dev", interface])
        try tool(["ip", "-n", device.ue, "link", "set", interface, "up"])
        try tool(["ip", "-n", device.ue, "route", "replace", "default", "dev", interface, "metric", "\(metric)"])
    }

    /// curl bound to `interface` to the carrier's endpoint: its exit status.
    private func reachCarrier(_ device: SimulatedDevice, through interface: String) throws -> Int32 {
        try device.run([
            "curl", "-sS", "-o", "/dev/null", "--max-time", "3", "--interface", interface,
            "http://100.64.0.1/"
        ]).status
    }

    /// Writes `value` into a qmi_wwan attribute as `echo` does, then reads it back after the
    /// modem had time to take the write in.
    private func writeAttribute(_ path: String, _ value: String) throws -> String? {
        try FileSystem.overwrite(value + "\n", at: path)
        usleep(300_000)
        return FileSystem.readText(path)
    }

    /// The packets `interface` sent (`TX`) or received (`RX`) in the device namespace (`ip -s link`).
    private func packets(_ device: SimulatedDevice, _ interface: String, _ direction: String) throws -> Int? {
        let lines = try tool(["ip", "-n", device.ue, "-s", "link", "show", interface]).split(separator: "\n")
        guard let header = lines.firstIndex(where: { $0.contains("\(direction):") }), header + 1 < lines.count else {
            return nil
        }
        return lines[header + 1].split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    /// libqmi's qmi-network on the EC25, in a private mount namespace of the device namespace whose
    /// /sys is the world's sysfs (libqmi finds `qmi/raw_ip` through /sys/class/usbmisc) and whose
    /// /tmp (the port's node, qmi-network's profile and state) vanishes with it.
    @Test func qmiNetworkAlignsTheKernelAndTheBearerCarriesTraffic() throws {
        var scenario = Self.scenario
        scenario.modems.removeLast()
        try SimulatedDevice.with(scenario, connect: false) { device in
            let sys = try #require(try device.environment()["CELLPATH_SYSFS_ROOT"])
            let port = try #require(try device.status()["modems"]?.array?[0]["control_port"]?.string)
            var target = [CChar](repeating: 0, count: 256)
            let length = readlink(port, &target, target.count - 1)
            let pty = String(decoding: target.prefix(max(0, length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            #expect(pty.hasPrefix("/dev/pts/"), "\(port) → \(pty)")
            let script = """
                set -e
                mount --bind \(sys) /sys
                mount -t tmpfs none /tmp
                touch /tmp/cdc-wdm0
                mount --bind \(pty) /tmp/cdc-wdm0
                printf 'APN=internet\\nIP_TYPE=4\\n' > /tmp/qmi-network.conf
                qmi-network --profile=/tmp/qmi-network.conf /tmp/cdc-wdm0 start
                """
            let run = try ProcessRunner.run(
                ["ip", "netns", "exec", device.ue, "unshare", "-m", "--propagation", "private", "sh", "-c", script],
                environment: SimulatedDevice.path)
            #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
            #expect(run.stdout.contains("Expected link layer protocol retrieved: 802-3"), "\(run.stdout)")
            #expect(run.stdout.contains("Kernel link layer protocol updated"), "\(run.stdout)")
            #expect(run.stdout.contains("Network started successfully"), "\(run.stdout)")
            #expect(FileSystem.readText("\(sys)/class/net/wwan0/qmi/raw_ip")?.hasPrefix("Y") == true)
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "connected")
            try configure(device, "wwan0", address: "100.64.23.10", metric: 700)
            #expect(try reachCarrier(device, through: "wwan0") == 0, "aligned by qmi-network: traffic flows")
        }
    }

    @Test func rawIPMismatchLosesEveryPacketAndQMAPFlowsOnTheMuxDevice() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let sys = try #require(try device.environment()["CELLPATH_SYSFS_ROOT"])
            let modems = try #require(try device.status()["modems"]?.array)
            let ec25 = try #require(modems[0]["control_port"]?.string)
            let rm500q = try #require(modems[1]["control_port"]?.string)

            // EC25: the firmware says raw-ip, qmi_wwan starts in 802.3 mode.
            let rawIP = "\(sys)/class/net/wwan0/qmi/raw_ip"
            #expect(FileSystem.readText(rawIP) == "N\n")
            let format = try qmicli(ec25, "--wda-get-data-format")
            #expect(field(format, after: "Link layer protocol") == "raw-ip", "\(format)")
            _ = try qmicli(ec25, "--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid")
            try configure(device, "wwan0", address: "100.64.23.10", metric: 700)
            #expect(try reachCarrier(device, through: "wwan0") != 0, "mismatched framing: every packet is lost")
            let lost = try SimulatedWorld.status(prefix: device.prefix).modems[0].counters
            #expect(lost.uplink.dropped["linkLayerMismatch", default: 0] > 0, "\(lost)")
            #expect(lost.uplink.relayedPackets == 0, "\(lost)")

            // raw_ip cannot change while wwan0 is up (EBUSY): the write is reverted.
            #expect(try writeAttribute(rawIP, "Y") == "N\n")
            try tool(["ip", "-n", device.ue, "link", "set", "wwan0", "down"])
            #expect(try writeAttribute(rawIP, "Y") == "Y\n")
            try configure(device, "wwan0", address: "100.64.23.10", metric: 700)
            #expect(try reachCarrier(device, through: "wwan0") == 0, "aligned: the bearer carries traffic")

            // RM500Q: QMAP on, the session bound to mux id 1, qmimux0 added over wwan1.
            _ = try qmicli(rm500q, "--wda-set-data-format=link-layer-protocol=raw-ip,ul-protocol=qmap,dl-protocol=qmap")
            let bind = try qmicli(
                rm500q, "--wds-bind-mux-data-port=mux-id=1,ep-type=hsusb,ep-iface-number=4",
                "--client-no-release-cid")
            let cid = try #require(field(bind, after: "CID"))
            let start = try qmicli(
                rm500q, "--wds-start-network=apn=internet,ip-type=4", "--client-cid=\(cid)",
                "--client-no-release-cid")
            #expect(start.contains("Packet data handle"), "\(start)")
            _ = try writeAttribute("\(sys)/class/net/wwan1/qmi/add_mux", "1")
            let links = try tool(["ip", "-n", device.ue, "-o", "link", "show"])
            #expect(links.contains("qmimux0"), "\(links)")
            #expect(FileSystem.exists("\(sys)/class/net/wwan1/upper_qmimux0"))
            #expect(FileSystem.exists("\(sys)/class/net/qmimux0/lower_wwan1"))

            try configure(device, "wwan1", address: "100.64.23.11", metric: 702)
            try configure(device, "qmimux0", address: "100.64.23.11", metric: 701)
            #expect(try reachCarrier(device, through: "wwan1") != 0, "the master carries no session")
            #expect(try reachCarrier(device, through: "qmimux0") == 0, "the mux device carries the session")
            let counters = try SimulatedWorld.status(prefix: device.prefix).modems[1].counters
            #expect(counters.uplink.dropped["wrongDevice", default: 0] > 0, "\(counters)")
            #expect(counters.downlink.relayedPackets > 0, "\(counters)")
            #expect(try packets(device, "qmimux0", "TX") ?? 0 > 0)
            #expect(try packets(device, "qmimux0", "RX") ?? 0 > 0, "the carrier's answers come on qmimux0")
            #expect(try packets(device, "wwan1", "RX") == 0, "and never on the master")
        }
    }
}
