import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// cellpath's own QMI client (the direct backend) on the zoo's QMI profiles, as real devices
/// need it: the EC25's raw-ip firmware behind a qmi_wwan in 802.3 mode (the kernel aligned before
/// an address goes on), the MC7455's and RM500Q's firmware that serves the SIM through UIM only,
/// the RM500Q's QMAP session on a `qmimuxN` device, and the RM520N on mhi_net. Each bearer
/// carries a fetch to the carrier with nothing on Wi-Fi, and `bearer down` leaves nothing.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct QMIClientZooEndToEndTests {
    static let profiles: [DeviceProfile.Name] = [.usbQMIRawIP, .usbQMIUIMOnly, .usbQMIQMAP, .pcieMHINet]

    /// One modem of `profile`, QMI, on the default network.
    static func scenario(_ profile: DeviceProfile.Name) -> Scenario {
        var scenario = Scenario.builtIn
        var modem = SimulatedModem(index: 0)
        modem.protocol = .qmi
        modem.device = profile
        scenario.modems = [modem]
        return scenario
    }

    /// What the device namespace holds that a bearer changes: links, addresses (without the
    /// kernel's link-local ones), routes of every table, rules of both families.
    private func networkState(_ device: SimulatedDevice) throws -> [String] {
        let commands = [
            ["ip", "-o", "link", "show"], ["ip", "-o", "addr", "show"], ["ip", "route", "show", "table", "all"],
            ["ip", "-6", "route", "show", "table", "all"], ["ip", "rule"], ["ip", "-6", "rule"]
        ]
        var lines: [String] = []
        for command in commands {
            let result = try device.run(command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            lines += result.stdout.split(separator: "\n").map(String.init).filter {
                !$0.contains("fe80:") && !$0.contains("scope link")
            }.map { command == commands[0] ? String($0.split(separator: ":").dropFirst().first ?? "") : $0 }
        }
        return lines.sorted()
    }

    private func json(_ result: ProcessResult) throws -> JSONValue {
        try JSONValue.parse(result.stdout)
    }

    @Test(arguments: profiles)
    func bearerCarriesTheCarrierFetchAndGoesDownLeavingNothing(_ profile: DeviceProfile.Name) throws {
        try SimulatedDevice.with(Self.scenario(profile), connect: false) { device in
            let listed = try device.cellpath(["modems", "--json", "--verbose-full"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let modem = try #require(try json(listed)["modems"]?.array?.first, "\(listed.stdout)")
            #expect(modem["sim"]?["state"]?.string == "ready", "\(listed.stdout) \(listed.stderr)")
            #expect(modem["error"] == .null, "\(listed.stdout)")
            #expect(modem["sim"]?["iccid"]?.string == SimulatedSIM.defaultICCID(index: 0), "\(listed.stdout)")
            #expect(modem["sim"]?["imsi"]?.string == SimulatedSIM.defaultIMSI(index: 0), "\(listed.stdout)")
            let master = try #require(modem["interface"]?.string)
            let before = try networkState(device)

            let up = try device.cellpath(["bearer", "up", "-m", "0", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            let interface = try #require(try json(up)["interface"]?.string, "\(up.stdout)")
            if profile == .usbQMIQMAP {
                #expect(interface.hasPrefix("qmimux"), "the QMAP session's mux device: \(interface)")
                let addresses = try device.run(["ip", "-o", "addr", "show", "dev", master]).stdout
                #expect(!addresses.contains("100.64."), "no address on the master: \(addresses)")
            } else {
                #expect(interface == master)
            }
            let status = try device.cellpath(["bearer", "status", "-m", "0", "--json"])
            #expect(try json(status)["interface"]?.string == interface, "\(status.stdout)")

            let (fetch, packets) = try device.capture(on: ["wlan0"]) {
                try device.cellpath(["fetch", "-m", "0", "http://mno.carrier.test/final", "--json"])
            }
            let hop = try #require(try json(fetch).hops.first, "\(fetch.stdout) \(fetch.stderr)")
            #expect(hop["status"]?.int == 404, "the carrier answered over the bearer: \(hop) \(fetch.stderr)")
            #expect(hop["local_address"]?.string?.hasPrefix("100.64.") == true, "\(hop)")
            #expect(packets["wlan0"] == [], "packets on wlan0: \(packets["wlan0"] ?? [])")
            let counters = try SimulatedWorld.status(prefix: device.prefix).modems[0].counters
            #expect(counters.uplink.dropped.values.reduce(0, +) == 0, "nothing dropped: \(counters)")

            let down = try device.cellpath(["bearer", "down", "-m", "0", "--json"])
            #expect(down.status == 0, "\(down.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            // The simulated kernel removes a QMAP mux (qmi/del_mux) a moment later than a real one.
            var after = try networkState(device)
            _ = try Poll.until(timeout: .seconds(10), interval: .milliseconds(100)) {
                after = try networkState(device)
                return after == before
            }
            #expect(after == before, "bearer down leaves what was there before")
        }
    }

    /// A QMAP bearer brought up as root is found by unprivileged commands (no CAP_NET_ADMIN,
    /// root's record unreadable): on its mux device, which holds its address, not the master.
    @Test func aQMAPBearerIsFoundOnItsMuxDeviceWithoutPrivilege() throws {
        try SimulatedDevice.with(Self.scenario(.usbQMIQMAP), connect: false) { device in
            let up = try device.cellpath(["bearer", "up", "-m", "0", "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            let mux = try #require(try json(up)["interface"]?.string, "\(up.stdout)")
            #expect(mux.hasPrefix("qmimux"), "\(mux)")
            // The port open to the unprivileged user, as the cellpath group's udev rule would make it.
            let port = try #require(
                try json(device.cellpath(["modems", "--json"]))["modems"]?.array?[0]["device"]?.string)
            #expect(try device.run(["chmod", "0666", port]).status == 0)
            // An unprivileged user's records are its own (root's are in a directory only root reads).
            let ownRecords = "/tmp/\(device.prefix)nobody-state"
            defer { _ = try? WorldFixture.output(["rm", "-rf", ownRecords]) }
            func nobody(_ arguments: [String]) throws -> ProcessResult {
                try device.run(
                    [
                        "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env",
                        "CELLPATH_STATE_DIR=\(ownRecords)", CellpathBinary.path
                    ] + arguments)
            }
            let status = try nobody(["bearer", "status", "-m", "0", "--json"])
            #expect(status.status == 0, "\(status.stderr)")
            #expect(try json(status)["state"]?.string == "connected", "\(status.stdout)")
            #expect(try json(status)["interface"]?.string == mux, "\(status.stdout)")

            let fetch = try nobody(["fetch", "-m", "0", "--json", "http://mno.carrier.test/final"])
            let hop = try #require(try json(fetch).hops.first, "\(fetch.stdout) \(fetch.stderr)")
            #expect(hop["status"]?.int == 404, "the carrier answered over the mux device: \(hop) \(fetch.stderr)")
            #expect(hop["local_address"]?.string?.hasPrefix("100.64.") == true, "\(hop)")
            #expect(try device.cellpath(["bearer", "down", "-m", "0"]).status == 0)
        }
    }

    /// The MC7455's SIM locked by its PIN, which only UIM serves: the state and retries from the
    /// card status, a wrong PIN refused (77) with the attempts left, the right one entered
    /// through UIM Verify PIN, and the bearer up.
    @Test func thePINGoesThroughUIM() throws {
        var scenario = Self.scenario(.usbQMIUIMOnly)
        scenario.modems[0].sim?.pinLocked = true
        scenario.modems[0].sim?.pin = "1234"
        let wrong = "/tmp/\(getpid())-uim-wrong.pin", right = "/tmp/\(getpid())-uim-right.pin"
        defer { unlink(wrong); unlink(right) }
        for (file, pin) in [(wrong, "0000"), (right, "1234")] {
            let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            #expect(descriptor >= 0)
            _ = pin.utf8CString.withUnsafeBytes { write(descriptor, $0.baseAddress, pin.utf8.count) }
            close(descriptor)
        }
        try SimulatedDevice.with(scenario, connect: false) { device in
            let locked = try json(try device.cellpath(["modems", "--json"]))["modems"]?.array?.first
            #expect(locked?["sim"]?["state"]?.string == "pin-required", "\(String(describing: locked))")
            #expect(locked?["sim"]?["pin_retries"]?.int == 3, "\(String(describing: locked))")
            let refused = try device.cellpath(["bearer", "up", "-m", "0", "--pin-file", wrong])
            #expect(refused.status == 77, "\(refused.stderr)")
            #expect(refused.stderr.contains("the SIM refused the PIN (2 attempts left)"), "\(refused.stderr)")
            let up = try device.cellpath(["bearer", "up", "-m", "0", "--pin-file", right, "--json"])
            #expect(up.status == 0, "\(up.stderr)")
            #expect(try json(up)["ipv4_address"]?.string == "100.64.23.10", "\(up.stdout)")
            #expect(try device.cellpath(["bearer", "down", "-m", "0"]).status == 0)
        }
    }

    /// A qmi_wwan without `qmi/raw_ip` (before Linux 4.5) expects 802.3 frames: the EC25's
    /// firmware is set to send them (WDA), and the bearer carries traffic.
    @Test func aKernelWithoutRawIPGetsFirmwareThatSends8023() throws {
        try SimulatedDevice.with(Self.scenario(.usbQMIRawIP), connect: false) { device in
            let sys = try #require(try device.environment()["CELLPATH_SYSFS_ROOT"])
            unlink("\(sys)/class/net/wwan0/qmi/raw_ip")
            let up = try device.cellpath(["bearer", "up", "-m", "0"])
            #expect(up.status == 0, "\(up.stderr)")
            let fetch = try device.cellpath(["fetch", "-m", "0", "http://mno.carrier.test/final", "--json"])
            #expect(try json(fetch).hops.first?["status"]?.int == 404, "\(fetch.stdout) \(fetch.stderr)")
            #expect(try device.cellpath(["bearer", "down", "-m", "0"]).status == 0)
        }
    }

    /// The RM500Q's raw-ip-only firmware behind a qmi_wwan without `qmi/raw_ip` nor `qmi/add_mux`:
    /// no alignment is possible, and `bearer up` refuses with the exact mismatch (69) before any
    /// call starts or address goes on.
    @Test func formatsThatCannotBeAlignedAreRefused() throws {
        try SimulatedDevice.with(Self.scenario(.usbQMIQMAP), connect: false) { device in
            let sys = try #require(try device.environment()["CELLPATH_SYSFS_ROOT"])
            for attribute in ["raw_ip", "add_mux", "del_mux"] { unlink("\(sys)/class/net/wwan0/qmi/\(attribute)") }
            let up = try device.cellpath(["bearer", "up", "-m", "0"])
            #expect(up.status == 69, "\(up.stdout) \(up.stderr)")
            #expect(
                up.stderr.contains("the firmware sends raw-ip, the kernel's qmi_wwan on wwan0 expects 802-3"),
                "\(up.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            let addresses = try device.run(["ip", "-o", "addr", "show", "dev", "wwan0"]).stdout
            #expect(!addresses.contains("100.64."), "\(addresses)")
        }
    }
}
