import Glibc
import SimulatedModems
import SimulatorScenario
import Synchronization
import TestSupport
import Testing

/// The MBIM behaviours of the device zoo's profiles as mbimcli and qmicli see them: MBIMEx
/// negotiation and the v2/v3 layouts, the FCC lock and its unlocks, the t7xx link-local IPv6
/// address, dual-SIM slots and the eSIM without profile.
@Suite("MBIM device profiles", .serialized, .ownThreads)
struct MBIMDeviceProfileTests {
    static func modem(
        _ device: DeviceProfile.Name,
        _ configure: (inout SimulatedModem) -> Void = { _ in }
    ) -> SimulatedModem {
        var m = SimulatedModem(protocol: .mbim)
        m.device = device
        configure(&m)
        return m
    }

    // MARK: MBIMEx

    @Test func mbimexV3IsNegotiatedAndAnsweredInTheV3Layouts() throws {
        let h = try ModemHarness(Self.modem(.usbMBIMv3))
        let services = try h.mbimcli("--query-device-services")
        #expect(services.stdout.contains("ms-basic-connect-extensions"), "\(services.stdout)")
        let version = try h.mbimcli("--ms-query-version=1.0,3.0")
        #expect(version.status == 0, "\(version.stderr)")
        #expect(version.stdout.contains("MBIM extended version : 3.00"), "\(version.stdout)")

        let ready = try h.mbimcli("--device-open-ms-mbimex-v3", "--query-subscriber-ready-status", "--verbose")
        #expect(ready.status == 0, "\(ready.stderr)")
        #expect(ready.stdout.contains("extended version 3.00"), "\(ready.stdout)")
        #expect(field("Ready state", in: ready.stdout) == "initialized")
        #expect(field("Subscriber ID", in: ready.stdout) == SimulatedSIM().imsi)
        #expect(field("SIM ICCID", in: ready.stdout) == SimulatedSIM().iccid)

        let packet = try h.mbimcli("--device-open-ms-mbimex-v3", "--query-packet-service-state")
        #expect(packet.status == 0, "\(packet.stderr)")
        #expect(field("Packet service state", in: packet.stdout) == "attached", "\(packet.stdout)")
        #expect(field("Frequency range", in: packet.stdout) == "1", "\(packet.stdout)")
        #expect(field("TAI PLMN MCC", in: packet.stdout) == h.device.modem.network.mcc)

        let signal = try h.mbimcli("--device-open-ms-mbimex-v3", "--query-signal-state")
        #expect(signal.status == 0, "\(signal.stderr)")
        let registration = try h.mbimcli("--device-open-ms-mbimex-v3", "--query-registration-state")
        #expect(field("Register state", in: registration.stdout) == "home", "\(registration.stderr)")
        #expect(field("Preferred data classes", in: registration.stdout) == "lte", "\(registration.stdout)")

        let caps = try h.mbimcli("--device-open-ms-mbimex-v3", "--ms-query-device-caps")
        #expect(caps.status == 0, "\(caps.stderr)")
        #expect(field("Device ID", in: caps.stdout) == h.device.modem.imei, "\(caps.stdout)")
        #expect(field("Hardware info", in: caps.stdout) == h.device.modem.model)

        let connect = try h.mbimcli("--device-open-ms-mbimex-v3", "--connect=apn=internet,ip-type=ipv4", "--no-close")
        #expect(connect.status == 0, "\(connect.stderr)")
        #expect(field("Access string", in: connect.stdout) == "internet", "\(connect.stdout)")
        #expect(field("IP type", in: connect.stdout) == "ipv4")
        #expect(h.bearerNetwork.isConnected(modemIndex: 0))
    }

    @Test func mbimexV2HostGetsV2FromAV3Device() throws {
        let h = try ModemHarness(Self.modem(.usbMBIMv3))
        let version = try h.mbimcli("--ms-query-version=1.0,2.0")
        #expect(version.stdout.contains("MBIM extended version : 2.00"), "\(version.stdout)")
        let packet = try h.mbimcli("--device-open-ms-mbimex-v2", "--query-packet-service-state")
        #expect(packet.status == 0, "\(packet.stderr)")
        #expect(field("Frequency range", in: packet.stdout) == "1", "\(packet.stdout)")
        // The v1 Connect layout still applies under v2.
        let connect = try h.mbimcli("--device-open-ms-mbimex-v2", "--connect=apn=internet")
        #expect(connect.status == 0, "\(connect.stderr)")
        #expect(field("IP type", in: connect.stdout) == "ipv4")
    }

    @Test func mbimV1ProfileHasNoExtensions() throws {
        let h = try ModemHarness(Self.modem(.usbMBIMv1))
        let services = try h.mbimcli("--query-device-services")
        #expect(!services.stdout.contains("ms-basic-connect-extensions"), "\(services.stdout)")
        let version = try h.mbimcli("--ms-query-version=1.0,3.0")
        #expect(version.status != 0)
        #expect(version.stderr.contains("NoDeviceSupport"), "\(version.stderr)")
        // libmbim skips the version exchange when the device does not list it: v1 layouts.
        let ready = try h.mbimcli("--device-open-ms-mbimex-v3", "--query-subscriber-ready-status")
        #expect(ready.status == 0, "\(ready.stderr)")
        #expect(field("Ready state", in: ready.stdout) == "initialized")
    }

    // MARK: FCC lock

    @Test func fccLockedRadioIsRefusedUntilUnlockedThroughQMIOverMBIM() throws {
        let h = try ModemHarness(Self.modem(.usbMBIMFCCLocked))
        let radio = try h.mbimcli("--query-radio-state")
        #expect(field("Software radio state", in: radio.stdout) == "off")
        let on = try h.mbimcli("--set-radio-state=on")
        #expect(on.status != 0)
        #expect(on.stderr.contains("OperationNotAllowed"), "\(on.stderr)")
        let services = try h.mbimcli("--query-device-services")
        #expect(services.stdout.contains("qmi"), "\(services.stdout)")

        // What ModemManager's fcc-unlock.d script for 1199:9079 sends, in MBIM mode.
        let unlock = try ProcessRunner.run([
            "qmicli", "-d", h.path, "--device-open-mbim",
            "--dms-set-fcc-authentication"
        ])
        #expect(unlock.status == 0, "\(unlock.stderr)")
        let after = try h.mbimcli("--set-radio-state=on")
        #expect(after.status == 0, "\(after.stderr)")
        #expect(field("Software radio state", in: after.stdout) == "on")
        let registration = try h.mbimcli("--query-registration-state")
        #expect(field("Register state", in: registration.stdout) == "home")
    }

    @Test func qmiOverMBIMServesOtherQMIMessages() throws {
        let h = try ModemHarness(Self.modem(.usbMBIMFCCLocked))
        let ids = try ProcessRunner.run(["qmicli", "-d", h.path, "--device-open-mbim", "--dms-get-ids"])
        #expect(ids.status == 0, "\(ids.stderr)")
        #expect(field("IMEI", in: ids.stdout) == h.device.modem.imei, "\(ids.stdout)")
    }

    @Test func fccUnlockLastsUntilUnplug() throws {
        let h = try ModemHarness(Self.modem(.pcieIOSM))
        #expect(try h.mbimcli("--set-radio-state=on").stderr.contains("OperationNotAllowed"))
        h.device.unlockFCC()
        let on = try h.mbimcli("--set-radio-state=on")
        #expect(on.status == 0, "\(on.stderr)")
        h.device.unplug()
        try h.device.start()
        let again = try h.mbimcli("--set-radio-state=on")
        #expect(again.stderr.contains("OperationNotAllowed"), "\(again.stderr)")
    }

    @Test func fm350UnlocksThroughItsATCommands() throws {
        let unlocked = Mutex(false)
        let state = FCCUnlockATState { unlocked.withLock { $0 = true } }
        #expect(fccUnlockATResponse(command: "AT+CGMI", state: state) == nil)
        #expect(fccUnlockATResponse(command: "at+gtfcclockver=1", state: state) == "+GTFCCLOCKVER: 0")
        let line = try #require(fccUnlockATResponse(command: "at+gtfcclockgen", state: state))
        let challenge = try #require(line.split(separator: "0x").last)
        // The response as ModemManager's fcc-unlock.d script for 14c3 computes it, with the shell tools.
        let script = "printf '%08x3df8c719' 0x\(challenge) | xxd -r -p | sha256sum | cut -c1-8"
        let hash = try ProcessRunner.run(["sh", "-c", script]).stdout.filter(\.isHexDigit)
        let response = try #require(UInt32(hash, radix: 16))
        #expect(fccUnlockATResponse(command: "at+gtfcclockver=\(response &+ 1)", state: state) == "+GTFCCLOCKVER: 0")
        #expect(!unlocked.withLock { $0 })
        #expect(fccUnlockATResponse(command: "at+gtfcclockver=\(response)", state: state) == "+GTFCCLOCKVER: 1")
        #expect(unlocked.withLock { $0 })
    }

    /// The FM350's AT port takes ModemManager's unlock exchange: radio-on is refused before it
    /// and allowed after it, on the MBIM port of the same device.
    @Test func fm350sATPortUnlocksItsMBIMRadio() throws {
        let h = try ModemHarness(Self.modem(.pcieT7xx))
        #expect(try h.mbimcli("--set-radio-state=on").stderr.contains("OperationNotAllowed"))
        let port = "\(h.runDirectory)/dev/wwan0at0"
        let generated = try DeviceZooLayoutTests.exchange(port, "AT+GTFCCLOCKGEN\r")
        let challenge = try #require(generated.split(separator: "0x").last?.prefix { $0.isHexDigit })
        let script = "printf '%08x3df8c719' 0x\(challenge) | xxd -r -p | sha256sum | cut -c1-8"
        let hash = try ProcessRunner.run(["sh", "-c", script]).stdout.filter(\.isHexDigit)
        let response = try #require(UInt32(hash, radix: 16))
        #expect(try DeviceZooLayoutTests.exchange(port, "AT+GTFCCLOCKVER=\(response)\r").contains("+GTFCCLOCKVER: 1"))
        var on = try h.mbimcli("--set-radio-state=on")
        for _ in 0 ..< 20 where on.status != 0 {
            usleep(50_000)
            on = try h.mbimcli("--set-radio-state=on")
        }
        #expect(on.status == 0, "\(on.stderr)")
    }

    // MARK: t7xx IPv6

    @Test func t7xxReportsALinkLocalIPv6Address() throws {
        let h = try ModemHarness(Self.modem(.pcieT7xx) { $0.ipType = .ipv4v6 })
        h.device.unlockFCC()
        #expect(try h.mbimcli("--set-radio-state=on").status == 0)
        let connect = try h.mbimcli("--connect=apn=internet,ip-type=ipv4v6", "--no-close")
        #expect(connect.status == 0, "\(connect.stderr)")
        let trid = try #require(field("TRID", in: connect.stdout).flatMap { Int($0) })
        let ip = try h.mbimcli("--query-ip-configuration", "--no-open=\(trid)")
        #expect(ip.status == 0, "\(ip.stderr)")
        #expect(ip.stdout.contains("fe80::2/64"), "\(ip.stdout)")
        #expect(ip.stdout.contains("Gateway: 'fe80::1'"), "\(ip.stdout)")
        #expect(!ip.stdout.contains("2001:db8:64:10::2"), "\(ip.stdout)")
        #expect(ip.stdout.contains("100.64.23.10/32"), "\(ip.stdout)")
    }

    // MARK: Slots

    @Test func dualSIMSlotsAndSwitching() throws {
        var second = SimulatedSIM(index: 1)
        second.iccid = "8944000000000000099"
        let h = try ModemHarness(Self.modem(.dualSIM) { $0.secondSlot = SecondSIMSlot(esim: true, sim: second) })
        let caps = try h.mbimcli("--ms-query-sys-caps")
        #expect(caps.status == 0, "\(caps.stderr)")
        #expect(field("Number of slots", in: caps.stdout) == "2", "\(caps.stdout)")
        #expect(field("Number of executors", in: caps.stdout) == "1")
        let mappings = try h.mbimcli("--ms-query-device-slot-mappings")
        #expect(mappings.stdout.contains("Executor '0': slot '0'"), "\(mappings.stdout)")
        let slot0 = try h.mbimcli("--ms-query-slot-info-status=0")
        #expect(field("Slot '0'", in: slot0.stdout) == "state-active", "\(slot0.stdout)")
        let slot1 = try h.mbimcli("--ms-query-slot-info-status=1")
        #expect(field("Slot '1'", in: slot1.stdout) == "state-active-esim", "\(slot1.stdout)")

        let connect = try h.mbimcli("--connect=apn=internet", "--no-close")
        #expect(connect.status == 0, "\(connect.stderr)")
        #expect(h.bearerNetwork.isConnected(modemIndex: 0))
        let switched = try h.mbimcli("--ms-set-device-slot-mappings=1")
        #expect(switched.status == 0, "\(switched.stderr)")
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        let ready = try h.mbimcli("--query-subscriber-ready-status")
        #expect(field("SIM ICCID", in: ready.stdout) == second.iccid, "\(ready.stdout)")
        let after = try h.mbimcli("--ms-query-device-slot-mappings")
        #expect(after.stdout.contains("Executor '0': slot '1'"), "\(after.stdout)")
    }

    @Test func esimWithoutProfile() throws {
        let h = try ModemHarness(
            Self.modem(.dualSIM) {
                $0.secondSlot = SecondSIMSlot(esim: true, sim: nil)
                $0.activeSlot = 2
            })
        let ready = try h.mbimcli("--device-open-ms-mbimex-v3", "--query-subscriber-ready-status")
        #expect(ready.status == 0, "\(ready.stderr)")
        #expect(field("Ready state", in: ready.stdout) == "no-esim-profile", "\(ready.stdout)")
        let slot1 = try h.mbimcli("--ms-query-slot-info-status=1")
        #expect(field("Slot '1'", in: slot1.stdout) == "state-active-esim-no-profiles", "\(slot1.stdout)")
        let connect = try h.mbimcli("--connect=apn=internet")
        #expect(connect.stderr.contains("SimNotInserted"), "\(connect.stderr)")
    }
}
