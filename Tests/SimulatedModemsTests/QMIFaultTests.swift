import Glibc
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// Scenario faults as qmicli (or a raw QMUX client) sees them.
@Suite("QMI modem faults", .serialized, .ownThreads)
struct QMIFaultTests {
    static func modem(_ configure: (inout SimulatedModem) -> Void) -> SimulatedModem {
        var m = SimulatedModem(protocol: .qmi)
        configure(&m)
        return m
    }

    @Test func noSIM() throws {
        let h = try ModemHarness(Self.modem { $0.sim = nil })
        for option in ["--dms-uim-get-imsi", "--dms-uim-get-iccid", "--dms-get-msisdn", "--dms-uim-get-pin-status"] {
            let r = try h.qmicli(option)
            #expect(r.status != 0)
            #expect(r.stderr.contains("'UimUninitialized'"), Comment(rawValue: option))
        }
        let start = try h.qmicli("--wds-start-network=apn=internet,ip-type=4")
        #expect(start.stderr.contains("'CallFailed'"))
        #expect(start.stderr.contains("no-service"))
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
    }

    @Test func pinLockedThenVerified() throws {
        let h = try ModemHarness(
            Self.modem {
                $0.sim?.pinLocked = true; $0.sim?.pin = "2468"
            })
        let imsi = try h.qmicli("--dms-uim-get-imsi")
        #expect(imsi.stderr.contains("'PinRestriction'"))
        let iccid = try h.qmicli("--dms-uim-get-iccid")
        #expect(iccid.status == 0, "\(iccid.stderr)")
        let status = try h.qmicli("--dms-uim-get-pin-status")
        #expect(status.stdout.contains("PIN1:\n\tStatus: enabled-not-verified\n\tVerify: 3"))
        let wrong = try h.qmicli("--dms-uim-verify-pin=PIN,1111")
        #expect(wrong.stderr.contains("'IncorrectPin'"))
        let right = try h.qmicli("--dms-uim-verify-pin=PIN,2468")
        #expect(right.status == 0, "\(right.stderr)")
        let after = try h.qmicli("--dms-uim-get-pin-status")
        #expect(after.stdout.contains("PIN1:\n\tStatus: enabled-verified"))
        let ok = try h.qmicli("--dms-uim-get-imsi")
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    @Test func radioOff() throws {
        let h = try ModemHarness(Self.modem { $0.faults.radioOff = true })
        let mode = try h.qmicli("--dms-get-operating-mode")
        #expect(field("Mode", in: mode.stdout) == "low-power")
        let serving = try h.qmicli("--nas-get-serving-system")
        #expect(field("Registration state", in: serving.stdout) == "not-registered")
        let signal = try h.qmicli("--nas-get-signal-strength")
        #expect(signal.stderr.contains("'NoNetworkFound'"))
        let online = try h.qmicli("--dms-set-operating-mode=online")
        #expect(online.status == 0, "\(online.stderr)")
        let now = try h.qmicli("--nas-get-serving-system")
        #expect(field("Registration state", in: now.stdout) == "registered")
    }

    @Test(arguments: [
        (RegistrationFault.searching, "not-registered-searching"), (.denied, "registration-denied"),
        (.deregistered, "not-registered")
    ])
    func notRegistered(fault: RegistrationFault, state: String) throws {
        let h = try ModemHarness(Self.modem { $0.faults.registration = fault })
        let r = try h.qmicli("--nas-get-serving-system")
        #expect(field("Registration state", in: r.stdout) == state)
        let start = try h.qmicli("--wds-start-network=apn=internet,ip-type=4")
        #expect(start.stderr.contains("'CallFailed'"))
        #expect(start.stderr.contains("call end reason (3): generic-no-service"))
    }

    @Test func roaming() throws {
        let h = try ModemHarness(
            Self.modem {
                $0.sim?.imsi = "204080123456789"
                $0.network = SimulatedNetwork(mcc: "310", mnc: "260", operatorName: "Visited US", roaming: true)
            })
        let r = try h.qmicli("--nas-get-serving-system")
        #expect(field("Roaming status", in: r.stdout) == "on")
        #expect(field("MCC", in: r.stdout) == "310")
        #expect(field("MNC with PCS digit", in: r.stdout) == "yes")
        let home = try h.qmicli("--nas-get-home-network")
        #expect(field("MCC", in: home.stdout) == "204")
    }

    @Test func connectRejectedWithCallEndReason() throws {
        let h = try ModemHarness(Self.modem { $0.faults.connectRejectCode = 33 })
        let r = try h.qmicli("--wds-start-network=apn=internet,ip-type=4")
        #expect(r.status != 0)
        #expect(r.stderr.contains("'CallFailed'"))
        #expect(r.stderr.contains("verbose call end reason (6,33): [3gpp] option-unsubscribed"))
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
    }

    @Test func wrongAPNAndIPv6AreRejected() throws {
        let h = try ModemHarness(Self.modem { _ in })
        let apn = try h.qmicli("--wds-start-network=apn=nope,ip-type=4")
        #expect(apn.stderr.contains("(6,27)"))
        let v6 = try h.qmicli("--wds-start-network=apn=internet,ip-type=6")
        #expect(v6.stderr.contains("(6,50)"))
    }

    /// Allocates a WDS client and starts the network over a raw port; returns the client id.
    static func startNetwork(_ port: RawPort) throws -> UInt8 {
        port.send(QMITestFrames.ctl(tid: 1, message: 0x22, tlvs: [(0x01, [0x01])]))
        let allocation = try #require(qmiFrames(port.receive()).first { $0.messageID == 0x22 })
        let cid = try #require(allocation.tlvs[0x01]).last!
        port.send(QMITestFrames.service(0x01, cid: cid, tid: 2, message: 0x20, tlvs: [(0x14, Array("internet".utf8))]))
        let started = qmiFrames(port.receive())
        #expect(started.first { $0.messageID == 0x20 }?.error == 0)
        return cid
    }

    @Test func bearerDroppedWithIndication() throws {
        let h = try ModemHarness(Self.modem { $0.faults.dropBearerAfterSeconds = 1 })
        let port = try RawPort(h.path)
        let cid = try Self.startNetwork(port)
        #expect(h.bearerNetwork.isConnected(modemIndex: 0))
        let indication = try #require(qmiFrames(port.receive(timeout: 3)).first)
        #expect(indication.flags == 0x04)
        #expect(indication.clientID == cid)
        #expect(indication.messageID == 0x22)
        #expect(indication.tlvs[0x01]?.first == 1)  // disconnected
        #expect(indication.tlvs[0x11] == [6, 0, 36, 0])  // 3GPP regular deactivation
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
        let settings = try h.qmicli("--wds-get-current-settings")
        #expect(settings.stderr.contains("'OutOfCall'"))
    }

    @Test func registrationLossDropsCallAndIndicates() throws {
        let h = try ModemHarness(Self.modem { _ in })
        let port = try RawPort(h.path)
        port.send(QMITestFrames.ctl(tid: 9, message: 0x22, tlvs: [(0x01, [0x03])]))
        _ = port.receive()
        _ = try Self.startNetwork(port)
        h.device.setRegistration(.searching)
        let frames = qmiFrames(port.receive(timeout: 2))
        #expect(frames.contains { $0.service == 0x01 && $0.messageID == 0x22 && $0.tlvs[0x01]?.first == 1 })
        #expect(frames.contains { $0.service == 0x03 && $0.messageID == 0x24 && $0.tlvs[0x01]?.first == 2 })
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
    }

    @Test func slowResponses() throws {
        let h = try ModemHarness(Self.modem { $0.faults.responseDelayMs = 300 })
        let start = ModemServerClock.now()
        let r = try h.qmicli("--dms-get-ids")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(ModemServerClock.now() - start >= 0.9)  // allocate, request, release: 300 ms each
    }

    @Test func garbageFramesAfterCTLResponses() throws {
        let h = try ModemHarness(Self.modem { $0.faults.garbageFrames = 4 })
        let port = try RawPort(h.path)
        port.send(QMITestFrames.ctl(tid: 1, message: 0x21))
        let frames = qmiFrames(port.receive(timeout: 10) { qmiFrames($0).count >= 5 })
        #expect(frames.count == 5)
        #expect(frames.dropFirst().allSatisfy { $0.service == 0xee })
        // qmicli gets junk after its client allocation and carries on.
        let r = try h.qmicli("--dms-get-ids")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("IMEI", in: r.stdout) == SimulatedModem.defaultIMEI(index: 0))
        #expect(r.stderr.contains("invalid message received"))
    }

    @Test func unplugRemovesPortAndSysfs() throws {
        let h = try ModemHarness(Self.modem { _ in })
        let port = try RawPort(h.path)
        _ = try Self.startNetwork(port)
        #expect(access("\(h.runDirectory)/sys/class/usbmisc/cdc-wdm0/device/driver", F_OK) == 0)
        h.device.unplug()
        #expect(port.hungUp())
        #expect(access(h.path, F_OK) != 0)
        #expect(access("\(h.runDirectory)/sys/class/usbmisc/cdc-wdm0", F_OK) != 0)
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
    }
}
