import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// The QMI device profiles (the zoo) as the real qmicli (libqmi 1.32) sees them: DMS UIM refused
/// and the UIM service, SIM slots, the firmware's data format and QMAP binding.
@Suite("QMI device profiles checked by qmicli", .serialized, .ownThreads)
struct QMIDeviceProfileTests {
    static let sim = SimulatedSIM(
        iccid: "8931440301234567890", imsi: "204080123456789", msisdn: "+31612345678",
        pinLocked: true, pin: "4321", pinAttemptsLeft: 3)

    static func modem(_ device: DeviceProfile.Name, sim: SimulatedSIM? = Self.sim) -> SimulatedModem {
        var modem = SimulatedModem(protocol: .qmi, sim: sim)
        modem.device = device
        return modem
    }

    /// The qmicli slot status text of physical slot 1, and of slot 2.
    private func slots(_ output: String) -> (first: String, second: String) {
        let parts = output.split(separator: "Physical slot 2:", maxSplits: 1)
        return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
    }

    @Test func uimOnlyFirmwareRefusesDMSUIM() throws {
        let h = try ModemHarness(Self.modem(.usbQMIUIMOnly))
        for command in [
            "--dms-uim-get-iccid", "--dms-uim-get-imsi", "--dms-uim-get-pin-status",
            "--dms-uim-verify-pin=PIN,4321"
        ] {
            let r = try h.qmicli(command)
            #expect(r.status != 0, "\(command): \(r.stdout)")
            #expect(r.stderr.contains("InvalidQmiCommand"), "\(command): \(r.stderr)")
        }
        let versions = try h.qmicli("--get-service-version-info")
        #expect(versions.stdout.contains("uim (1.46)"), "\(versions.stdout)")
    }

    @Test func uimCardStatusVerifyAndRead() throws {
        let h = try ModemHarness(Self.modem(.usbQMIUIMOnly))
        let locked = try h.qmicli("--uim-get-card-status")
        #expect(locked.status == 0, "\(locked.stderr)")
        #expect(field("Card state", in: locked.stdout) == "present", "\(locked.stdout)")
        #expect(field("Application state", in: locked.stdout) == "pin1-or-upin-pin-required", "\(locked.stdout)")
        #expect(field("PIN1 state", in: locked.stdout) == "enabled-not-verified", "\(locked.stdout)")
        #expect(field("PIN1 retries", in: locked.stdout) == "3", "\(locked.stdout)")

        let iccid = try h.qmicli("--uim-read-transparent=0x3F00,0x2FE2")
        #expect(iccid.status == 0, "\(iccid.stderr)")
        #expect(iccid.stdout.contains("98:13:44:30:10:32:54:76:98:F0"), "\(iccid.stdout)")
        let imsiLocked = try h.qmicli("--uim-read-transparent=0x3F00,0x7FFF,0x6F07")
        #expect(imsiLocked.status != 0, "the IMSI is not readable before PIN1: \(imsiLocked.stdout)")

        let wrong = try h.qmicli("--uim-verify-pin=PIN1,0000")
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("IncorrectPin"), "\(wrong.stderr)")
        let verify = try h.qmicli("--uim-verify-pin=PIN1,4321")
        #expect(verify.status == 0, "\(verify.stderr)")
        let ready = try h.qmicli("--uim-get-card-status")
        #expect(field("Application state", in: ready.stdout) == "ready", "\(ready.stdout)")
        #expect(field("PIN1 state", in: ready.stdout) == "enabled-verified", "\(ready.stdout)")
        #expect(field("PIN1 retries", in: ready.stdout) == "3", "\(ready.stdout)")

        // EF IMSI: length 8, parity 9 with the first digit, then the digits low nibble first.
        let imsi = try h.qmicli("--uim-read-transparent=0x3F00,0x7FFF,0x6F07")
        #expect(imsi.status == 0, "\(imsi.stderr)")
        #expect(imsi.stdout.contains("08:29:40:80:10:32:54:76:98"), "\(imsi.stdout)")
        let missing = try h.qmicli("--uim-read-transparent=0x3F00,0x7FFF,0x6F46")
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("SimFileNotFound"), "\(missing.stderr)")
    }

    @Test func absentCardHasNoSession() throws {
        let h = try ModemHarness(Self.modem(.usbQMIUIMOnly, sim: nil))
        let r = try h.qmicli("--uim-get-card-status")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("Card state", in: r.stdout) == "absent", "\(r.stdout)")
        #expect(field("Primary GW", in: r.stdout) == "session doesn't exist", "\(r.stdout)")
    }

    @Test func idealisedModemKeepsDMSUIM() throws {
        let h = try ModemHarness(Self.modem(.simulated))
        let iccid = try h.qmicli("--dms-uim-get-iccid")
        #expect(iccid.status == 0, "\(iccid.stderr)")
        #expect(field("ICCID", in: iccid.stdout) == "8931440301234567890")
        let card = try h.qmicli("--uim-get-card-status")
        #expect(card.stderr.contains("InvalidQmiCommand"), "\(card.stderr)")
    }

    @Test func slotStatusAndSwitch() throws {
        var modem = Self.modem(.usbQMIRawIP)
        let other = SimulatedSIM(iccid: "8944500102198304826", imsi: "234150999888777", msisdn: "+447700900123")
        modem.secondSlot = SecondSIMSlot(esim: false, sim: other)
        let h = try ModemHarness(modem)
        let status = try h.qmicli("--uim-get-slot-status")
        #expect(status.status == 0, "\(status.stderr)")
        let (first, second) = slots(status.stdout)
        #expect(field("Card status", in: first) == "present", "\(status.stdout)")
        #expect(field("Slot status", in: first) == "active", "\(status.stdout)")
        #expect(field("ICCID", in: first) == "8931440301234567890", "\(status.stdout)")
        #expect(field("Card status", in: second) == "present", "\(status.stdout)")
        #expect(field("Slot status", in: second) == "inactive", "\(status.stdout)")

        let same = try h.qmicli("--uim-switch-slot=1")
        #expect(same.stderr.contains("NoEffect"), "\(same.stderr)")
        let switched = try h.qmicli("--uim-switch-slot=2")
        #expect(switched.status == 0, "\(switched.stderr)")
        let after = try h.qmicli("--uim-get-slot-status")
        #expect(field("Slot status", in: slots(after.stdout).first) == "inactive", "\(after.stdout)")
        #expect(field("Slot status", in: slots(after.stdout).second) == "active", "\(after.stdout)")
        let iccid = try h.qmicli("--uim-read-transparent=0x3F00,0x2FE2")
        #expect(iccid.stdout.contains("98:44:05:10:20:91:38:40:28:F6"), "the second slot's card: \(iccid.stdout)")
        let card = try h.qmicli("--uim-get-card-status")
        #expect(field("Application state", in: card.stdout) == "ready", "the second SIM has no PIN: \(card.stdout)")
    }

    /// A client watching slot status (through qmi-proxy, as two clients share the port) gets the
    /// indication of another client's switch.
    @Test(.enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
    func slotSwitchIsIndicated() throws {
        var modem = Self.modem(.usbQMIUIMOnly)
        modem.secondSlot = SecondSIMSlot(esim: false, sim: SimulatedSIM(index: 1))
        let h = try ModemHarness(modem)
        let output = "\(h.runDirectory)/monitor.log"
        let monitor = try BackgroundProcess(
            ["qmicli", "-p", "-d", h.path, "--device-open-qmi", "--uim-monitor-slot-status"], output: output)
        usleep(1_000_000)
        let switched = try ProcessRunner.run(["qmicli", "-p", "-d", h.path, "--device-open-qmi", "--uim-switch-slot=2"])
        #expect(switched.status == 0, "\(switched.stderr)")
        usleep(500_000)
        monitor.stop()
        let indicated = FileSystem.readText(output) ?? ""
        let parts = indicated.split(separator: "Physical slot 2:", maxSplits: 1)
        #expect(parts.count == 2 && field("Slot status", in: String(parts[1])) == "active", "\(indicated)")
    }

    @Test func esimWithoutProfileReadsAsNoCard() throws {
        var modem = Self.modem(.usbQMIUIMOnly)
        modem.secondSlot = SecondSIMSlot(esim: true, sim: nil)
        let h = try ModemHarness(modem)
        let switched = try h.qmicli("--uim-switch-slot=2")
        #expect(switched.status == 0, "\(switched.stderr)")
        let status = try h.qmicli("--uim-get-slot-status")
        #expect(status.stdout.contains("Is eUICC: yes"), "\(status.stdout)")
        let card = try h.qmicli("--uim-get-card-status")
        #expect(field("Primary GW", in: card.stdout) == "session doesn't exist", "\(card.stdout)")
        let iccid = try h.qmicli("--uim-read-transparent=0x3F00,0x2FE2")
        #expect(iccid.status != 0, "\(iccid.stdout)")
    }

    @Test func firmwareDataFormatDefaultsAndQMAP() throws {
        let plain = try ModemHarness(Self.modem(.usbQMIRawIP))
        let format = try plain.qmicli("--wda-get-data-format")
        #expect(field("Link layer protocol", in: format.stdout) == "raw-ip", "\(format.stdout)")
        let qmap = "ul-protocol=qmap,dl-protocol=qmap"
        let refused = try plain.qmicli("--wda-set-data-format=link-layer-protocol=raw-ip,\(qmap)")
        #expect(refused.status == 0, "\(refused.stderr)")
        #expect(
            field("Downlink data aggregation protocol", in: refused.stdout) == "disabled",
            "firmware without QMAP keeps aggregation off: \(refused.stdout)")

        let multiplexing = try ModemHarness(Self.modem(.usbQMIQMAP))
        let set = try multiplexing.qmicli(
            "--wda-set-data-format=link-layer-protocol=raw-ip,\(qmap),"
                + "dl-max-datagrams=64,dl-datagram-max-size=16384")
        #expect(set.status == 0, "\(set.stderr)")
        let after = try multiplexing.qmicli("--wda-get-data-format")
        #expect(field("Uplink data aggregation protocol", in: after.stdout) == "qmap", "\(after.stdout)")
        #expect(field("Downlink data aggregation protocol", in: after.stdout) == "qmap", "\(after.stdout)")
        #expect(field("Downlink data aggregation max datagrams", in: after.stdout) == "32", "\(after.stdout)")
        #expect(field("Downlink data aggregation max size", in: after.stdout) == "16384", "\(after.stdout)")
        let ethernet = try multiplexing.qmicli("--wda-set-data-format=link-layer-protocol=802-3,\(qmap)")
        #expect(ethernet.stderr.contains("InvalidArgument"), "QMAP needs raw-ip: \(ethernet.stderr)")
    }

    /// 5G firmware sends raw IP only: asked for 802.3 it keeps raw-ip and says so; the EC25 switches.
    @Test func rawIPOnlyFirmwareKeepsRawIP() throws {
        let ethernet = "--wda-set-data-format=link-layer-protocol=802-3"
        let rm500q = try ModemHarness(Self.modem(.usbQMIQMAP)).qmicli(ethernet)
        #expect(rm500q.status == 0, "\(rm500q.stderr)")
        #expect(field("Link layer protocol", in: rm500q.stdout) == "raw-ip", "\(rm500q.stdout)")
        let ec25 = try ModemHarness(Self.modem(.usbQMIRawIP)).qmicli(ethernet)
        #expect(field("Link layer protocol", in: ec25.stdout) == "802-3", "\(ec25.stdout)")
    }

    @Test func bindMuxDataPortChecksTheEndpoint() throws {
        let usb = try ModemHarness(Self.modem(.usbQMIQMAP))
        let wrong = try usb.qmicli("--wds-bind-mux-data-port=mux-id=1,ep-type=pcie,ep-iface-number=4")
        #expect(wrong.stderr.contains("InvalidArgument"), "\(wrong.stderr)")
        let bound = try usb.qmicli(
            "--wds-bind-mux-data-port=mux-id=1,ep-type=hsusb,ep-iface-number=4",
            "--client-no-release-cid")
        #expect(bound.status == 0, "\(bound.stderr)")
        let pcie = try ModemHarness(Self.modem(.pcieMHINet))
        let onPCIe = try pcie.qmicli(
            "--wds-bind-mux-data-port=mux-id=1,ep-type=pcie,ep-iface-number=4",
            "--client-no-release-cid")
        #expect(onPCIe.status == 0, "\(onPCIe.stderr)")
    }
}

/// The qmi_wwan `qmi/` attributes of a simulated QMI modem's net device, written as a host
/// (qmi-network, ModemManager, a user) writes them, and the data path they leave the bearer.
@Suite("qmi_wwan attributes of the simulated QMI modems", .serialized, .ownThreads)
struct QMIKernelAttributeTests {
    static func harness(_ device: DeviceProfile.Name) throws -> ModemHarness {
        var modem = SimulatedModem(protocol: .qmi)
        modem.device = device
        return try ModemHarness(modem)
    }

    static func attribute(_ h: ModemHarness, _ name: String) -> String {
        "\(h.device.sysfsRoot)/class/net/\(h.device.interfaceName ?? "")/qmi/\(name)"
    }

    /// Writes `value` into the attribute as `echo value > file` does (in place).
    static func write(_ h: ModemHarness, _ name: String, _ value: String) throws {
        try FileSystem.overwrite(value + "\n", at: attribute(h, name))
    }

    /// Waits up to 2 s for `condition`, as the modem's thread takes the write in.
    static func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0 ..< 200 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    @Test func rawIPMismatchBlocksTheBearerUntilAligned() throws {
        let h = try Self.harness(.usbQMIRawIP)
        #expect(FileSystem.readText(Self.attribute(h, "raw_ip")) == "N\n", "qmi_wwan starts in 802.3 mode")
        let start = try h.qmicli("--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid")
        #expect(start.status == 0, "\(start.stderr)")
        #expect(Self.eventually { h.bearerNetwork.dataPath(modemIndex: 0) == .blocked(reason: "linkLayerMismatch") })

        h.bearerNetwork.setInterfaceUp(true, modemIndex: 0)
        try Self.write(h, "raw_ip", "Y")
        #expect(
            Self.eventually { FileSystem.readText(Self.attribute(h, "raw_ip")) == "N\n" },
            "a write while the interface is up is refused (EBUSY) and reverted")
        #expect(h.bearerNetwork.dataPath(modemIndex: 0) == .blocked(reason: "linkLayerMismatch"))

        h.bearerNetwork.setInterfaceUp(false, modemIndex: 0)
        try Self.write(h, "raw_ip", "Y")
        #expect(Self.eventually { h.bearerNetwork.dataPath(modemIndex: 0) == .master })
        #expect(FileSystem.readText(Self.attribute(h, "raw_ip")) == "Y\n")

        // The firmware switched to 802.3: mismatched again until the kernel follows.
        let ethernet = try h.qmicli("--wda-set-data-format=link-layer-protocol=802-3")
        #expect(ethernet.status == 0, "\(ethernet.stderr)")
        #expect(Self.eventually { h.bearerNetwork.dataPath(modemIndex: 0) == .blocked(reason: "linkLayerMismatch") })
    }

    @Test func addMuxCreatesQmimuxAndTheBoundSessionUsesIt() throws {
        let h = try Self.harness(.usbQMIQMAP)
        let format = try h.qmicli("--wda-set-data-format=link-layer-protocol=raw-ip,ul-protocol=qmap,dl-protocol=qmap")
        #expect(format.status == 0, "\(format.stderr)")
        let bind = try h.qmicli(
            "--wds-bind-mux-data-port=mux-id=1,ep-type=hsusb,ep-iface-number=4",
            "--client-no-release-cid")
        let cid = try #require(field("CID", in: bind.stdout), "\(bind.stdout)")
        let start = try h.qmicli(
            "--wds-start-network=apn=internet,ip-type=4", "--client-cid=\(cid)",
            "--client-no-release-cid")
        #expect(start.status == 0, "\(start.stderr)")
        #expect(
            Self.eventually { h.bearerNetwork.dataPath(modemIndex: 0) == .blocked(reason: "noMuxLink") },
            "QMAP on, no qmimux for mux id 1 yet")

        try Self.write(h, "add_mux", "1")
        #expect(Self.eventually { h.bearerNetwork.dataPath(modemIndex: 0) == .muxLink("qmimux0") })
        #expect(h.bearerNetwork.muxLinkNames == ["qmimux0"])
        let sys = h.device.sysfsRoot
        #expect(FileSystem.readText(Self.attribute(h, "add_mux")) == "0x01\n")
        #expect(FileSystem.exists("\(sys)/class/net/qmimux0/lower_\(h.device.interfaceName ?? "")/qmi/raw_ip"))
        let master = try #require(h.device.interfaceName)
        #expect(FileSystem.exists("\(sys)/class/net/\(master)/upper_qmimux0/lower_\(master)"))

        try Self.write(h, "add_mux", "1")
        #expect(
            Self.eventually { FileSystem.readText(Self.attribute(h, "add_mux")) == "0x01\n" },
            "a duplicate is refused")
        try Self.write(h, "add_mux", "300")
        #expect(Self.eventually { FileSystem.readText(Self.attribute(h, "add_mux")) == "0x01\n" }, "out of range")
        #expect(h.bearerNetwork.muxLinkNames == ["qmimux0"])

        try Self.write(h, "del_mux", "0x01")
        #expect(Self.eventually { h.bearerNetwork.dataPath(modemIndex: 0) == .blocked(reason: "noMuxLink") })
        #expect(h.bearerNetwork.muxLinkNames.isEmpty)
        #expect(!FileSystem.exists("\(sys)/class/net/qmimux0"))
    }

    @Test func unplugRemovesTheMuxLinksAndRoutesTheNetDevice() throws {
        let h = try Self.harness(.usbQMIQMAP)
        _ = try h.qmicli("--wda-set-data-format=link-layer-protocol=raw-ip,ul-protocol=qmap,dl-protocol=qmap")
        let bind = try h.qmicli(
            "--wds-bind-mux-data-port=mux-id=3,ep-type=hsusb,ep-iface-number=4",
            "--client-no-release-cid")
        let cid = try #require(field("CID", in: bind.stdout), "\(bind.stdout)")
        _ = try h.qmicli("--wds-start-network=apn=internet,ip-type=4", "--client-cid=\(cid)", "--client-no-release-cid")
        try Self.write(h, "add_mux", "0x03")
        #expect(Self.eventually { h.bearerNetwork.dataPath(modemIndex: 0) == .muxLink("qmimux0") })
        h.device.unplug()
        #expect(h.bearerNetwork.muxLinkNames.isEmpty)
        #expect(h.bearerNetwork.dataPath(modemIndex: 0) == .master)
        #expect(!FileSystem.exists("\(h.device.sysfsRoot)/devices/virtual/net/qmimux0"))
    }

    @Test func idealisedModemKeepsItsDataPath() throws {
        let h = try Self.harness(.simulated)
        #expect(FileSystem.readText(Self.attribute(h, "raw_ip")) == "Y\n")
        let start = try h.qmicli("--wds-start-network=apn=internet,ip-type=4", "--client-no-release-cid")
        #expect(start.status == 0, "\(start.stderr)")
        #expect(h.bearerNetwork.isConnected(modemIndex: 0))
        #expect(h.bearerNetwork.dataPath(modemIndex: 0) == .master)
    }
}
