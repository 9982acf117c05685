import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// The real ModemManager on the QMI device profiles: on the Sierra MC7455 (DMS UIM refused) it
/// falls back to the UIM service, reads the SIM's identities and reports both SIM slots; on the Quectel EC25 (raw-ip
/// firmware, qmi_wwan in 802.3 mode) it aligns `qmi/raw_ip` with the firmware, and the bearer
/// it connects carries traffic.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ModemManagerQMIProfileEndToEndTests {
    private static var scenario: Scenario {
        var scenario = Scenario.builtIn
        var ec25 = SimulatedModem(index: 0)
        ec25.protocol = .qmi
        ec25.device = .usbQMIRawIP
        var mc7455 = SimulatedModem(index: 1)
        mc7455.protocol = .qmi
        mc7455.device = .usbQMIUIMOnly
        mc7455.secondSlot = SecondSIMSlot(esim: false, sim: SimulatedSIM(index: 5))
        scenario.modems = [ec25, mc7455]
        scenario.modemManager = true
        return scenario
    }

    /// The modem object whose primary port is `port`.
    private func modem(_ device: SimulatedDevice, port: String) throws -> String? {
        let list = try device.run(["mmcli", "-L"])
        let paths = list.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("/org/freedesktop/ModemManager1/Modem/") }.map(String.init)
        }
        return try paths.first { try device.run(["mmcli", "-m", $0]).stdout.contains("primary port: \(port)") }
    }

    /// The value of `key` in `mmcli -K` output (`key : value`).
    private func value(_ key: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(key + " ") }?
            .split(separator: ":", maxSplits: 1).last.map { String($0.drop { $0 == " " }) }
    }

    @Test func modemManagerFallsBackToUIMAndAlignsRawIP() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let sys = try #require(try device.environment()["CELLPATH_SYSFS_ROOT"])

            // MC7455: DMS UIM answers InvalidQmiCommand; ModemManager reads the SIM through UIM.
            let mc7455 = try #require(try modem(device, port: "cdc-wdm1"))
            let shown = try device.run(["mmcli", "-m", mc7455, "-K"])
            let simPath = try #require(value("modem.generic.sim", in: shown.stdout), "\(shown.stdout)")
            let sim = try device.run(["mmcli", "-i", simPath, "-K"])
            let expected = try #require(Self.scenario.modems[1].sim)
            #expect(value("sim.properties.iccid", in: sim.stdout) == expected.iccid, "\(sim.stdout)")
            #expect(value("sim.properties.imsi", in: sim.stdout) == expected.imsi, "\(sim.stdout)")
            // Both physical slots, from UIM Get Slot Status.
            #expect(value("modem.generic.primary-sim-slot", in: shown.stdout) == "1", "\(shown.stdout)")
            let slots = shown.stdout.split(separator: "\n").filter { $0.hasPrefix("modem.generic.sim-slots.value[") }
            #expect(slots.count == 2, "\(shown.stdout)")
            let other = try #require(slots.last?.split(separator: ":", maxSplits: 1).last)
            let otherSIM = try device.run(["mmcli", "-i", String(other.drop { $0 == " " }), "-K"])
            let otherICCID = Self.scenario.modems[1].secondSlot?.sim?.iccid
            #expect(value("sim.properties.iccid", in: otherSIM.stdout) == otherICCID, "\(otherSIM.stdout)")

            // EC25: ModemManager sets qmi_wwan to raw-ip, as the firmware is; its bearer carries traffic.
            let ec25 = try #require(try modem(device, port: "cdc-wdm0"))
            let rawIP = FileSystem.readText("\(sys)/class/net/wwan0/qmi/raw_ip")
            #expect(rawIP?.hasPrefix("Y") == true, "qmi_wwan starts with N: \(rawIP ?? "none")")
            let connect = try device.run(["mmcli", "-m", ec25, "--simple-connect=apn=internet,ip-type=ipv4"])
            #expect(connect.status == 0, "\(connect.stdout) \(connect.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "connected")
            try device.run(["ip", "addr", "replace", "100.64.23.10/32", "dev", "wwan0"]).expectSuccess()
            try device.run(["ip", "link", "set", "wwan0", "up"]).expectSuccess()
            try device.run(["ip", "route", "replace", "default", "dev", "wwan0", "metric", "700"]).expectSuccess()
            let reached = try device.run([
                "curl", "-sS", "-o", "/dev/null", "--max-time", "3", "--interface", "wwan0",
                "http://100.64.0.1/"
            ])
            #expect(reached.status == 0, "\(reached.stderr)")
        }
    }
}

private extension ProcessResult {
    func expectSuccess(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(status == 0, "\(stderr)", sourceLocation: sourceLocation)
    }
}
