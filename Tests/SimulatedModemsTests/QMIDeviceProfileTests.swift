import SimulatedModems
import SimulatorScenario
import Testing
import TestSupport

/// The QMI device profiles (the zoo) as the real qmicli (libqmi 1.32) sees them: DMS UIM refused
/// and the UIM service, SIM slots, the firmware's data format and QMAP binding.
@Suite("QMI device profiles checked by qmicli", .serialized)
struct QMIDeviceProfileTests {
    static let sim = SimulatedSIM(iccid: "8931440301234567890", imsi: "204080123456789", msisdn: "+31612345678",
                                  pinLocked: true, pin: "4321", pinAttemptsLeft: 3)

    static func modem(_ device: DeviceProfile.Name, sim: SimulatedSIM? = Self.sim) -> SimulatedModem {
        var modem = SimulatedModem(protocol: .qmi, sim: sim)
        modem.device = device
        return modem
    }

    @Test func uimOnlyFirmwareRefusesDMSUIM() throws {
        let h = try ModemHarness(Self.modem(.usbQMIUIMOnly))
        for command in ["--dms-uim-get-iccid", "--dms-uim-get-imsi", "--dms-uim-get-pin-status",
                        "--dms-uim-verify-pin=PIN1,4321"] {
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
        let second = SimulatedSIM(iccid: "8944500102198304826", imsi: "234150999888777", msisdn: "+447700900123")
        modem.secondSlot = SecondSIMSlot(esim: false, sim: second)
        let h = try ModemHarness(modem)
        let status = try h.qmicli("--uim-get-slot-status")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("Physical slot 1:\n\t\tCard status: present\n\t\tSlot status: active"), "\(status.stdout)")
        #expect(status.stdout.contains("Physical slot 2:\n\t\tCard status: present\n\t\tSlot status: inactive"), "\(status.stdout)")
        #expect(status.stdout.contains("8931440301234567890"), "\(status.stdout)")

        let same = try h.qmicli("--uim-switch-slot=1")
        #expect(same.stderr.contains("NoEffect"), "\(same.stderr)")
        let switched = try h.qmicli("--uim-switch-slot=2")
        #expect(switched.status == 0, "\(switched.stderr)")
        let after = try h.qmicli("--uim-get-slot-status")
        #expect(after.stdout.contains("Physical slot 2:\n\t\tCard status: present\n\t\tSlot status: active"), "\(after.stdout)")
        let iccid = try h.qmicli("--uim-read-transparent=0x3F00,0x2FE2")
        #expect(iccid.stdout.contains("98:44:05:10:20:91:38:40:28:F6"), "the second slot's card: \(iccid.stdout)")
        let card = try h.qmicli("--uim-get-card-status")
        #expect(field("Application state", in: card.stdout) == "ready", "the second SIM has no PIN: \(card.stdout)")
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
        let refused = try plain.qmicli("--wda-set-data-format=link-layer-protocol=raw-ip,ul-protocol=qmap,dl-protocol=qmap")
        #expect(refused.status == 0, "\(refused.stderr)")
        #expect(field("Downlink data aggregation protocol", in: refused.stdout) == "disabled",
                "firmware without QMAP keeps aggregation off: \(refused.stdout)")

        let qmap = try ModemHarness(Self.modem(.usbQMIQMAP))
        let set = try qmap.qmicli("--wda-set-data-format=link-layer-protocol=raw-ip,ul-protocol=qmap,dl-protocol=qmap,"
                                  + "dl-max-datagrams=64,dl-datagram-max-size=16384")
        #expect(set.status == 0, "\(set.stderr)")
        let after = try qmap.qmicli("--wda-get-data-format")
        #expect(field("Uplink data aggregation protocol", in: after.stdout) == "qmap", "\(after.stdout)")
        #expect(field("Downlink data aggregation protocol", in: after.stdout) == "qmap", "\(after.stdout)")
        #expect(field("Downlink data aggregation max datagrams", in: after.stdout) == "32", "\(after.stdout)")
        #expect(field("Downlink data aggregation max size", in: after.stdout) == "16384", "\(after.stdout)")
        let ethernet = try qmap.qmicli("--wda-set-data-format=link-layer-protocol=802-3")
        #expect(ethernet.stderr.contains("InvalidArgument"), "QMAP needs raw-ip: \(ethernet.stderr)")
    }

    @Test func bindMuxDataPortChecksTheEndpoint() throws {
        let usb = try ModemHarness(Self.modem(.usbQMIQMAP))
        let wrong = try usb.qmicli("--wds-bind-mux-data-port=mux-id=1,ep-type=pcie,ep-iface-number=4")
        #expect(wrong.stderr.contains("InvalidArgument"), "\(wrong.stderr)")
        let bound = try usb.qmicli("--wds-bind-mux-data-port=mux-id=1,ep-type=hsusb,ep-iface-number=4",
                                   "--client-no-release-cid")
        #expect(bound.status == 0, "\(bound.stderr)")
        let pcie = try ModemHarness(Self.modem(.pcieMHINet))
        let onPCIe = try pcie.qmicli("--wds-bind-mux-data-port=mux-id=1,ep-type=pcie,ep-iface-number=4",
                                     "--client-no-release-cid")
        #expect(onPCIe.status == 0, "\(onPCIe.stderr)")
    }
}
