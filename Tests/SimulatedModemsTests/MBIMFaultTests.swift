import Glibc
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// Scenario faults as mbimcli (or a raw MBIM client) sees them.
@Suite("MBIM modem faults", .serialized, .ownThreads)
struct MBIMFaultTests {
    static func modem(_ configure: (inout SimulatedModem) -> Void) -> SimulatedModem {
        var m = SimulatedModem(protocol: .mbim)
        configure(&m)
        return m
    }

    @Test func noSIM() throws {
        let h = try ModemHarness(Self.modem { $0.sim = nil })
        let ready = try h.mbimcli("--query-subscriber-ready-status")
        #expect(ready.status == 0, "\(ready.stderr)")
        #expect(field("Ready state", in: ready.stdout) == "sim-not-inserted")
        let home = try h.mbimcli("--query-home-provider")
        #expect(home.status != 0)
        #expect(home.stderr.contains("SimNotInserted"))
        let connect = try h.mbimcli("--connect=access-string=internet")
        #expect(connect.status != 0)
        #expect(connect.stderr.contains("SimNotInserted"))
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
    }

    @Test func pinLockedThenEntered() throws {
        let h = try ModemHarness(
            Self.modem {
                $0.sim?.pinLocked = true; $0.sim?.pin = "4321"; $0.sim?.pinAttemptsLeft = 3
            })
        let ready = try h.mbimcli("--query-subscriber-ready-status")
        #expect(field("Ready state", in: ready.stdout) == "device-locked")
        let pin = try h.mbimcli("--query-pin-state")
        #expect(field("PIN state", in: pin.stdout) == "locked")
        #expect(field("PIN type", in: pin.stdout) == "pin1")
        #expect(field("Remaining attempts", in: pin.stdout) == "3")
        let connect = try h.mbimcli("--connect=access-string=internet")
        #expect(connect.stderr.contains("PinRequired"))

        let wrong = try h.mbimcli("--enter-pin=0000")
        #expect(wrong.status != 0)
        let after = try h.mbimcli("--query-pin-state")
        #expect(field("Remaining attempts", in: after.stdout) == "2")

        let right = try h.mbimcli("--enter-pin=4321")
        #expect(right.status == 0, "\(right.stderr)")
        let unlocked = try h.mbimcli("--query-subscriber-ready-status")
        #expect(field("Ready state", in: unlocked.stdout) == "initialized")
        let registered = try h.mbimcli("--query-registration-state")
        #expect(field("Register state", in: registered.stdout) == "home")
    }

    @Test func radioOffThenOn() throws {
        let h = try ModemHarness(Self.modem { $0.faults.radioOff = true })
        let radio = try h.mbimcli("--query-radio-state")
        #expect(field("Software radio state", in: radio.stdout) == "off")
        let registration = try h.mbimcli("--query-registration-state")
        #expect(field("Register state", in: registration.stdout) == "deregistered")
        let connect = try h.mbimcli("--connect=access-string=internet")
        #expect(connect.stderr.contains("RadioPowerOff"))
        let on = try h.mbimcli("--set-radio-state=on")
        #expect(on.status == 0, "\(on.stderr)")
        let now = try h.mbimcli("--query-registration-state")
        #expect(field("Register state", in: now.stdout) == "home")
    }

    @Test(arguments: [
        (RegistrationFault.searching, "searching", "none"), (.deregistered, "deregistered", "none"),
        (.denied, "denied", "plmn-not-allowed")
    ])
    func notRegistered(fault: RegistrationFault, state: String, networkError: String) throws {
        let h = try ModemHarness(Self.modem { $0.faults.registration = fault })
        let r = try h.mbimcli("--query-registration-state")
        #expect(field("Register state", in: r.stdout) == state)
        #expect(field("Network error", in: r.stdout) == networkError)
        // A denial names the network's technology (ModemManager files the denial under it).
        // libmbim names no data class "unknown".
        #expect(field("Available data classes", in: r.stdout) == (fault == .denied ? "lte" : "unknown"))
        let packet = try h.mbimcli("--query-packet-service-state")
        #expect(field("Packet service state", in: packet.stdout) == "detached")
        let signal = try h.mbimcli("--query-signal-state")
        #expect(field("RSSI [0-31,99]", in: signal.stdout) == "99")
        let connect = try h.mbimcli("--connect=access-string=internet")
        #expect(connect.status != 0)
        #expect(connect.stderr.contains("NotRegistered"))
    }

    @Test func roaming() throws {
        let h = try ModemHarness(
            Self.modem {
                $0.sim?.imsi = "234150123456789"
                $0.network = SimulatedNetwork(mcc: "262", mnc: "01", operatorName: "Visited DE", roaming: true)
            })
        let r = try h.mbimcli("--query-registration-state")
        #expect(field("Register state", in: r.stdout) == "roaming")
        #expect(field("Provider ID", in: r.stdout) == "26201")
        let home = try h.mbimcli("--query-home-provider")
        #expect(field("Provider ID", in: home.stdout) == "23415")
        let c = try h.mbimcli("--connect=access-string=internet")
        #expect(c.status == 0, "\(c.stderr)")
    }

    @Test func connectRejectedWithNetworkError() throws {
        let h = try ModemHarness(Self.modem { $0.faults.connectRejectCode = 33 })
        let c = try h.mbimcli("--connect=access-string=internet")
        #expect(c.status != 0)
        #expect(c.stderr.contains("Failure"))
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        // The network error travels in the FAILURE response, as the MBIM spec has it.
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 1))
        _ = port.receive()
        port.send(MBIMTestFrames.connect(tid: 2))
        let done = try #require(mbimMessages(port.receive()).first)
        #expect(readLE32(done, 0) == 0x8000_0003)
        #expect(readLE32(done, 40) == 2)  // status FAILURE
        let info = Array(done[48...])
        #expect(readLE32(info, 4) == 3)  // deactivated
        #expect(readLE32(info, 32) == 33)  // NwError
    }

    @Test func unknownAPNIsRejected() throws {
        let h = try ModemHarness(Self.modem { $0.apn = "corp.example" })
        let c = try h.mbimcli("--connect=access-string=internet")
        #expect(c.status != 0)
        let ok = try h.mbimcli("--connect=access-string=corp.example")
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    @Test func bearerDroppedWithIndication() throws {
        let h = try ModemHarness(Self.modem { $0.faults.dropBearerAfterSeconds = 1 })
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 1))
        _ = port.receive()
        port.send(MBIMTestFrames.connect(tid: 2))
        let done = try #require(mbimMessages(port.receive()).first)
        #expect(readLE32(done, 40) == 0)
        #expect(h.bearerNetwork.isConnected(modemIndex: 0))
        let indication = try #require(mbimMessages(port.receive(timeout: 3)).first)
        #expect(readLE32(indication, 0) == 0x8000_0007)
        #expect(readLE32(indication, 36) == 12)  // CONNECT
        let info = Array(indication[44...])
        #expect(readLE32(info, 4) == 3)  // deactivated
        #expect(readLE32(info, 32) == 36)  // regular deactivation
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        #expect(!h.device.isBearerConnected)
    }

    @Test func registrationChangeIsIndicated() throws {
        let h = try ModemHarness(Self.modem { _ in })
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 1))
        _ = port.receive()
        port.send(MBIMTestFrames.connect(tid: 2))
        _ = port.receive()
        h.device.setRegistration(.denied)
        let messages = mbimMessages(port.receive(timeout: 2))
        let cids = messages.filter { readLE32($0, 0) == 0x8000_0007 }.map { readLE32($0, 36) }
        #expect(cids.contains(12))  // CONNECT deactivated
        #expect(cids.contains(9))  // REGISTER_STATE
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        let r = try h.mbimcli("--query-registration-state")
        #expect(field("Register state", in: r.stdout) == "denied")
    }

    @Test func slowResponses() throws {
        let h = try ModemHarness(Self.modem { $0.faults.responseDelayMs = 400 })
        let start = ModemServerClock.now()
        let r = try h.mbimcli("--query-device-caps")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(ModemServerClock.now() - start >= 0.8)  // OPEN_DONE, COMMAND_DONE, CLOSE_DONE delayed
    }

    @Test func garbageFramesAfterOpen() throws {
        let h = try ModemHarness(Self.modem { $0.faults.garbageFrames = 3 })
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 7))
        let messages = mbimMessages(port.receive(timeout: 10) { mbimMessages($0).count >= 4 })
        #expect(messages.count == 4)
        #expect(readLE32(messages[0], 0) == 0x8000_0001)
        #expect(messages.dropFirst().allSatisfy { MBIMKnownTypes.contains(readLE32($0, 0)) == false })
        // libmbim drops the junk and carries on.
        let r = try h.mbimcli("--query-subscriber-ready-status")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("Ready state", in: r.stdout) == "initialized")
        #expect(r.stderr.contains("Message type unknown"))
    }

    @Test func unplugRemovesPortAndSysfs() throws {
        let h = try ModemHarness(Self.modem { _ in })
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 1))
        _ = port.receive()
        port.send(MBIMTestFrames.connect(tid: 2))
        _ = port.receive()
        #expect(h.bearerNetwork.isConnected(modemIndex: 0))
        h.device.unplug()
        #expect(port.hungUp())
        #expect(access(h.path, F_OK) != 0)
        #expect(access("\(h.runDirectory)/sys/class/usbmisc/cdc-wdm0", F_OK) != 0)
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        let r = try h.mbimcli("--query-device-caps")
        #expect(r.status != 0)
        // Plugged back: a fresh port, served again.
        try h.device.start()
        let again = try h.mbimcli("--query-device-caps")
        #expect(again.status == 0, "\(again.stderr)")
    }
}

let MBIMKnownTypes: Set<UInt32> = [0x8000_0001, 0x8000_0002, 0x8000_0003, 0x8000_0004, 0x8000_0007]

enum ModemServerClock {
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
