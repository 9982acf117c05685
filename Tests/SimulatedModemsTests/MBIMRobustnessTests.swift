import Glibc
import SimulatedModems
import SimulatorScenario
import TestSupport
import Testing

/// Malformed, truncated and fragmented traffic from MBIM clients.
@Suite("MBIM modem robustness", .serialized, .ownThreads)
struct MBIMRobustnessTests {
    @Test func garbageFromClientGetsFunctionErrorAndServiceContinues() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        let port = try RawPort(h.path)
        for seed in 0 ..< 20 {
            var junk: [UInt8] = []
            var x = UInt32(seed * 7919 + 1)
            for _ in 0 ..< (17 + seed * 13) {
                x = x &* 1_103_515_245 &+ 12345; junk.append(UInt8(truncatingIfNeeded: x >> 16))
            }
            port.send(junk)
        }
        _ = port.receive(timeout: 0.7)
        // An unknown message type with a sane length gets FUNCTION_ERROR UNKNOWN.
        port.send(le32(0x99) + le32(16) + le32(42) + le32(0))
        let reply = mbimMessages(port.receive())
        #expect(reply.first.map { readLE32($0, 0) } == 0x8000_0004)
        #expect(reply.first.map { readLE32($0, 8) } == 42)
        #expect(reply.first.map { readLE32($0, 12) } == 6)
        let r = try h.mbimcli("--query-device-caps")
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test func commandBeforeOpenIsRefused() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.command(tid: 5, cid: 1))
        let reply = try #require(mbimMessages(port.receive()).first)
        #expect(readLE32(reply, 0) == 0x8000_0004)
        #expect(readLE32(reply, 12) == 5)  // NOT_OPENED
    }

    @Test func truncatedMessageFromVanishedClientIsForgotten() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        do {
            let port = try RawPort(h.path)
            port.send(Array(MBIMTestFrames.open(tid: 1).prefix(9)))
        }
        usleep(700_000)
        let r = try h.mbimcli("--query-device-caps")
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test func clientVanishingMidTransactionLeavesServiceRunning() throws {
        let h = try ModemHarness(
            SimulatedModem(
                protocol: .mbim,
                faults: {
                    var f = ModemFaults(); f.responseDelayMs = 200; return f
                }()))
        for tid in 1 ... 3 {
            let port = try RawPort(h.path)
            port.send(MBIMTestFrames.open(tid: UInt32(tid)) + MBIMTestFrames.command(tid: UInt32(tid + 10), cid: 2))
        }
        for _ in 0 ..< 5 {
            let r = try h.mbimcli("--query-subscriber-ready-status")
            #expect(r.status == 0, "\(r.stderr)")
            #expect(field("Ready state", in: r.stdout) == "initialized")
        }
    }

    @Test func responsesAreFragmentedToTheMaxControlTransfer() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim, model: String(repeating: "M", count: 60)))
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 1, maxTransfer: 64))
        _ = port.receive()
        port.send(MBIMTestFrames.command(tid: 2, cid: 1))
        let fragments = mbimMessages(port.receive())
        #expect(fragments.count > 1)
        #expect(fragments.allSatisfy { $0.count <= 64 && readLE32($0, 0) == 0x8000_0003 && readLE32($0, 8) == 2 })
        #expect(
            fragments.enumerated().allSatisfy {
                readLE32($1, 12) == UInt32(fragments.count) && readLE32($1, 16) == UInt32($0)
            })
        let payload = fragments.flatMap { $0[20...] }
        let info = Array(payload[28...])
        #expect(readLE32(payload, 20) == 0)  // status success
        #expect(Int(readLE32(payload, 24)) == info.count)
        let hardwareOffset = Int(readLE32(info, 56)), hardwareLength = Int(readLE32(info, 60))
        let units = stride(from: hardwareOffset, to: hardwareOffset + hardwareLength, by: 2).map {
            UInt16(info[$0]) | UInt16(info[$0 + 1]) << 8
        }
        #expect(String(decoding: units, as: UTF16.self) == String(repeating: "M", count: 60))
    }

    @Test func fragmentedCommandsAreReassembled() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        let port = try RawPort(h.path)
        port.send(MBIMTestFrames.open(tid: 1))
        _ = port.receive()
        // A SIGNAL_STATE query split in two fragments.
        let payload = MBIMTestFrames.basicConnect + le32(11) + le32(0) + le32(0)
        let first = Array(payload.prefix(10)), second = Array(payload.dropFirst(10))
        for (index, chunk) in [first, second].enumerated() {
            port.send(le32(3) + le32(UInt32(20 + chunk.count)) + le32(9) + le32(2) + le32(UInt32(index)) + chunk)
        }
        let reply = try #require(mbimMessages(port.receive()).first)
        #expect(readLE32(reply, 0) == 0x8000_0003)
        #expect(readLE32(reply, 36) == 11)
        #expect(readLE32(reply, 40) == 0)
        // Out of sequence: FUNCTION_ERROR.
        port.send(le32(3) + le32(UInt32(20 + second.count)) + le32(10) + le32(2) + le32(1) + second)
        let error = try #require(mbimMessages(port.receive()).first)
        #expect(readLE32(error, 0) == 0x8000_0004)
        #expect(readLE32(error, 12) == 2)
    }

    @Test func responsesForAVanishedClientAreNotDeliveredToTheNext() throws {
        var modem = SimulatedModem(protocol: .mbim)
        modem.faults.responseDelayMs = 300
        let h = try ModemHarness(modem)
        do {
            let port = try RawPort(h.path)
            port.send(MBIMTestFrames.open(tid: 1) + MBIMTestFrames.command(tid: 2, cid: 1))
            usleep(50_000)
        }
        let next = try RawPort(h.path)
        #expect(next.receive(timeout: 1.0).isEmpty)
    }

    @Test func halfSentFrameOfAVanishedClientIsDroppedAtOnce() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        do {
            let port = try RawPort(h.path)
            port.send(Array(MBIMTestFrames.open(tid: 1).prefix(9)))
            usleep(50_000)
        }
        let next = try RawPort(h.path)
        next.send(MBIMTestFrames.open(tid: 5))
        let reply = mbimMessages(next.receive(timeout: 0.3))
        #expect(reply.first.map { readLE32($0, 0) } == 0x8000_0001)
        #expect(reply.first.map { readLE32($0, 8) } == 5)
    }

    @Test func repeatedOpenCloseByManyClients() throws {
        let h = try ModemHarness(SimulatedModem(protocol: .mbim))
        for _ in 0 ..< 15 {
            let r = try h.mbimcli("--query-radio-state")
            #expect(r.status == 0, "\(r.stderr)")
        }
    }
}
