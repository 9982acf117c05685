import CellpathCore
import FoundationEssentials
import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// Several modems from one scenario, and the sysfs tree discovery reads.
@Suite("Simulated modem fleet and sysfs", .serialized, .ownThreads)
struct FleetAndSysfsTests {
    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        return n >= 0 ? String(decoding: buffer[0 ..< n], as: UTF8.self).trimmingCharacters(in: "\n") : nil
    }

    static func readBytes(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        return n > 0 ? Array(buffer[0 ..< n]) : []
    }

    static func resolve(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    @Test func mbimAndQMIModemsSideBySide() throws {
        let run = try TemporaryDirectory.make("cellpath-fleet")
        defer { FileSystem.removeTree(run) }
        let scenario = Scenario(modems: [
            SimulatedModem(protocol: .mbim, imei: "351111111111111", sim: SimulatedSIM(imsi: "001010000000001")),
            SimulatedModem(protocol: .qmi, imei: "352222222222222", sim: SimulatedSIM(imsi: "001010000000002"))
        ])
        let bearerNetwork = StaticBearerNetwork()
        let fleet = SimulatedModemFleet(scenario: scenario, runDirectory: run, bearerNetwork: bearerNetwork)
        try fleet.start()
        defer { fleet.stop() }

        let mbim = try ProcessRunner.run(["mbimcli", "-d", "\(run)/dev/cdc-wdm0", "--query-subscriber-ready-status"])
        #expect(field("Subscriber ID", in: mbim.stdout) == "001010000000001")
        let qmi = try ProcessRunner.run([
            "qmicli", "-d", "\(run)/dev/cdc-wdm1", "--device-open-qmi", "--dms-uim-get-imsi"
        ])
        #expect(field("IMSI", in: qmi.stdout) == "001010000000002")

        let start = try ProcessRunner.run([
            "qmicli", "-d", "\(run)/dev/cdc-wdm1", "--device-open-qmi",
            "--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid"
        ])
        #expect(start.status == 0, "\(start.stderr)")
        #expect(bearerNetwork.isConnected(modemIndex: 1))
        #expect(!bearerNetwork.isConnected(modemIndex: 0))
        #expect(fleet.device(controlPort: "cdc-wdm1")?.interfaceName == "wwan1")

        let sys = "\(run)/sys/class/usbmisc"
        #expect(Self.resolve("\(sys)/cdc-wdm0/device/driver")?.hasSuffix("/bus/usb/drivers/cdc_mbim") == true)
        #expect(Self.resolve("\(sys)/cdc-wdm1/device/driver")?.hasSuffix("/bus/usb/drivers/qmi_wwan") == true)
        #expect(access("\(sys)/cdc-wdm0/device/net/wwan0", F_OK) == 0)
        #expect(access("\(sys)/cdc-wdm1/device/net/wwan1", F_OK) == 0)
        #expect(Self.readFile("\(sys)/cdc-wdm0/device/../idVendor") == "1199")
        #expect(Self.readFile("\(sys)/cdc-wdm1/device/../idProduct") == "68c0")
        #expect(Self.resolve("\(sys)/cdc-wdm0/subsystem") == Self.resolve("\(run)/sys/class/usbmisc"))
        #expect(Self.resolve("\(sys)/cdc-wdm0/device/subsystem") == Self.resolve("\(run)/sys/bus/usb"))
        #expect(Self.resolve("\(sys)/cdc-wdm0/device/../subsystem") == Self.resolve("\(run)/sys/bus/usb"))
        #expect(Self.resolve("\(run)/sys/class/net/wwan1/subsystem") == Self.resolve("\(run)/sys/class/net"))
        #expect(Self.resolve("\(run)/sys/class/wwan/wwan0mbim0/subsystem") == Self.resolve("\(run)/sys/class/wwan"))
        #expect(Self.readFile("\(run)/sys/class/net/wwan1/qmi/raw_ip") == "Y")
        #expect(access("\(run)/sys/class/net/wwan1/qmi/pass_through", W_OK) == 0)
        #expect(access("\(run)/sys/class/net/wwan0/qmi", F_OK) != 0)
        let descriptors = Self.readBytes("\(sys)/cdc-wdm0/device/../descriptors")
        #expect(descriptors.count == 18 + 9 + 9 + 22 && descriptors[0] == 18 && descriptors[1] == 1)
        #expect(Array(descriptors[(descriptors.count - 12)...].prefix(3)) == [12, 0x24, 0x1b])  // MBIM functional
        #expect(Self.readFile("\(run)/sys/class/wwan/wwan0mbim0/type") == "MBIM")
        #expect(access("\(run)/sys/class/wwan/wwan1mbim0", F_OK) != 0)

        fleet.stop()
        #expect(!bearerNetwork.isConnected(modemIndex: 1))
        #expect(access("\(sys)/cdc-wdm0", F_OK) != 0)
        #expect(access("\(run)/dev/cdc-wdm1", F_OK) != 0)
    }

    @Test func startingTwiceIsRefused() throws {
        let run = try TemporaryDirectory.make("cellpath-fleet")
        defer { FileSystem.removeTree(run) }
        let device = SimulatedModemDevice(
            modem: SimulatedModem(), index: 0, runDirectory: run, bearerNetwork: StaticBearerNetwork())
        try device.start()
        defer { device.stop() }
        let error = #expect(throws: CellpathError.self) { try device.start() }
        #expect(error?.kind == .internalError)
        #expect(device.terminalPath?.hasPrefix("/dev/pts/") == true)
    }

    @Test func dataPathFailureRejectsTheConnect() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi), bearerNetwork: StaticBearerNetwork(failing: true))
        let r = try h.qmicli("--wds-start-network=apn=internet,ip-type=4")
        #expect(r.status != 0)
        #expect(r.stderr.contains("'CallFailed'"))
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> String {
        var s = self
        while s.last == set { s.removeLast() }
        return s
    }
}

/// The controls the world's daemon uses while modems run.
@Suite("Simulated modem controls", .serialized, .ownThreads)
struct ModemControlTests {
    @Test func setRadioOffAndOn() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        h.device.setRadio(on: false)
        usleep(100_000)
        let off = try h.mbimcli("--query-radio-state")
        #expect(field("Software radio state", in: off.stdout) == "off")
        h.device.setRadio(on: true)
        usleep(100_000)
        let on = try h.mbimcli("--query-registration-state")
        #expect(field("Register state", in: on.stdout) == "home")
    }

    @Test func dropBearerNow() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        let start = try h.qmicli("--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid")
        #expect(start.status == 0, "\(start.stderr)")
        #expect(h.device.isBearerConnected)
        h.device.dropBearer()
        Poll.until(timeout: .seconds(5)) { !h.device.isBearerConnected }
        #expect(!h.device.isBearerConnected)
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        let status = try h.qmicli("--wds-get-packet-service-status")
        #expect(status.stdout.contains("'disconnected'"))
    }
}
