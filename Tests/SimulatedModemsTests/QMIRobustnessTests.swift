import Glibc
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// Malformed, truncated and abandoned traffic from QMI clients.
@Suite("QMI modem robustness", .serialized, .ownThreads)
struct QMIRobustnessTests {
    @Test func garbageFromClientIsSkipped() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        let port = try RawPort(h.path)
        for seed in 0 ..< 20 {
            var junk: [UInt8] = []
            var x = UInt32(seed * 104_729 + 3)
            for _ in 0 ..< (11 + seed * 17) {
                x = x &* 1_103_515_245 &+ 12345; junk.append(UInt8(truncatingIfNeeded: x >> 16))
            }
            port.send(junk)
        }
        _ = port.receive(timeout: 0.7)
        let r = try h.qmicli("--dms-get-ids")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(field("IMEI", in: r.stdout) == SimulatedModem.defaultIMEI(index: 0))
    }

    @Test func malformedTLVsGetMalformedMessage() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        let port = try RawPort(h.path)
        // A CTL frame whose TLV claims more bytes than the message holds.
        let frame: [UInt8] =
            [0x01] + le16(15) + [0x00, 0x00, 0x00, 0x00, 0x05] + le16(0x22) + le16(4) + [0x01] + le16(40) + [0x01]
        port.send(frame)
        let reply = try #require(qmiFrames(port.receive()).first)
        #expect(reply.messageID == 0x22)
        #expect(reply.error == 1)  // MalformedMessage
    }

    @Test func unknownMessagesAndClients() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        let port = try RawPort(h.path)
        port.send(QMITestFrames.service(0x02, cid: 77, tid: 1, message: 0x25))
        #expect(qmiFrames(port.receive()).first?.error == 7)  // InvalidClientId
        port.send(QMITestFrames.ctl(tid: 2, message: 0x22, tlvs: [(0x01, [0x02])]))
        let cid = try #require(qmiFrames(port.receive()).first?.tlvs[0x01]).last!
        port.send(QMITestFrames.service(0x02, cid: cid, tid: 3, message: 0x5555))
        #expect(qmiFrames(port.receive()).first?.error == 71)  // InvalidQmiCommand
        port.send(QMITestFrames.ctl(tid: 4, message: 0x22, tlvs: [(0x01, [0x42])]))
        #expect(qmiFrames(port.receive()).first?.error == 31)  // InvalidServiceType
        port.send(QMITestFrames.ctl(tid: 5, message: 0x27))
        #expect(qmiFrames(port.receive()).first?.error == 0)  // sync releases every client
        port.send(QMITestFrames.service(0x02, cid: cid, tid: 6, message: 0x25))
        #expect(qmiFrames(port.receive()).first?.error == 7)
    }

    @Test func truncatedFrameFromVanishedClientIsForgotten() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        do {
            let port = try RawPort(h.path)
            port.send(Array(QMITestFrames.ctl(tid: 1, message: 0x22, tlvs: [(0x01, [0x02])]).prefix(8)))
        }
        usleep(700_000)
        let r = try h.qmicli("--dms-get-ids")
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test func clientVanishingMidTransactionLeavesServiceRunning() throws {
        var modem = SimulatedModem(protocol: .qmi)
        modem.faults.responseDelayMs = 150
        let h = try ModemHarness(modem)
        for tid in 1 ... 3 {
            let port = try RawPort(h.path)
            port.send(QMITestFrames.ctl(tid: UInt8(tid), message: 0x22, tlvs: [(0x01, [0x02])]))
        }
        for _ in 0 ..< 5 {
            let r = try h.qmicli("--dms-uim-get-iccid")
            #expect(r.status == 0, "\(r.stderr)")
            #expect(field("ICCID", in: r.stdout) == SimulatedSIM.defaultICCID(index: 0))
        }
    }

    /// Two clients that open the port one right after the other (qmi-proxy, asked by two
    /// programs at once, opens it twice and closes the second): inotify merges the two opens
    /// into one event, and the one still open must keep getting its answers.
    @Test func aClientOpenedRightAfterAnotherGetsAnswersWhenTheOtherCloses() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        for round in 1 ... 20 {
            let first = try RawPort(h.path)
            let second = try RawPort(h.path)
            first.close()
            second.send(QMITestFrames.ctl(tid: UInt8(round), message: 0x22, tlvs: [(0x01, [0x02])]))
            let reply = qmiFrames(second.receive(timeout: 2)).first
            #expect(
                reply?.messageID == 0x22 && reply?.error == 0,
                "round \(round): no answer once the client opened just before this one closed")
        }
    }

    @Test func repeatedOpenCloseByManyClients() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        for _ in 0 ..< 15 {
            let r = try h.qmicli("--nas-get-signal-strength")
            #expect(r.status == 0, "\(r.stderr)")
        }
    }
}

/// CTL and state-change behaviour beyond qmicli's defaults.
@Suite("QMI modem extras", .serialized, .ownThreads)
struct QMIExtraTests {
    @Test func ctlSetDataFormatEchoesTheProtocol() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        let port = try RawPort(h.path)
        port.send(QMITestFrames.ctl(tid: 3, message: 0x26, tlvs: [(0x01, [1]), (0x10, le16(2))]))
        let reply = try #require(qmiFrames(port.receive()).first)
        #expect(reply.error == 0)
        #expect(reply.tlvs[0x10] == le16(2))
    }

    @Test func lowPowerModeEndsTheCallWithIndications() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .qmi))
        let port = try RawPort(h.path)
        port.send(QMITestFrames.ctl(tid: 1, message: 0x22, tlvs: [(0x01, [0x02])]))
        let dms = try #require(qmiFrames(port.receive()).first?.tlvs[0x01]).last!
        port.send(QMITestFrames.ctl(tid: 2, message: 0x22, tlvs: [(0x01, [0x03])]))
        let nas = try #require(qmiFrames(port.receive()).first?.tlvs[0x01]).last!
        _ = try QMIFaultTests.startNetwork(port)
        port.send(QMITestFrames.service(0x02, cid: dms, tid: 9, message: 0x2E, tlvs: [(0x01, [1])]))
        let frames = qmiFrames(port.receive())
        #expect(frames.first?.messageID == 0x2E && frames.first?.error == 0)
        #expect(
            frames.contains {
                $0.service == 0x01 && $0.flags == 0x04 && $0.tlvs[0x01]?.first == 1 && $0.tlvs[0x10] == le16(3)
            })
        #expect(
            frames.contains {
                $0.service == 0x03 && $0.clientID == nas && $0.messageID == 0x24 && $0.tlvs[0x01]?.first == 0
            })
        #expect(!h.bearerNetwork.isConnected(modemIndex: 0))
    }
}
