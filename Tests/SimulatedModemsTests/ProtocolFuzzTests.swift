import SimulatorScenario
import Testing

@testable import SimulatedModems

/// The MBIM and QMI state machines fed with random and mutated frames: they must never trap,
/// and must answer a valid request afterwards.
@Suite("Modem protocol fuzzing")
struct ProtocolFuzzTests {
    /// xorshift; deterministic so that a failure can be replayed.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
        mutating func bytes(_ n: Int) -> [UInt8] { (0 ..< n).map { _ in UInt8(truncatingIfNeeded: next()) } }
    }

    /// Flips, truncates, extends or overwrites a valid frame.
    static func mutate(_ frame: [UInt8], _ r: inout Random) -> [UInt8] {
        var f = frame
        switch r.below(5) {
        case 0: for _ in 0 ..< (1 + r.below(4)) where !f.isEmpty { f[r.below(f.count)] ^= UInt8(1 << r.below(8)) }
        case 1: f = Array(f.prefix(r.below(f.count + 1)))
        case 2: f += r.bytes(r.below(64))
        case 3: if f.count > 8 { let o = r.below(f.count - 4); f.replaceSubrange(o ..< (o + 4), with: r.bytes(4)) }
        default: f = r.bytes(r.below(200))
        }
        return f
    }

    static func modem(_ p: ModemProtocol) -> ModemState {
        var m = SimulatedModem(protocol: p)
        m.sim?.pinLocked = true
        return ModemState(index: 0, modem: m, bearerNetwork: StaticBearerNetwork())
    }

    @Test func mbimSurvivesMutatedTraffic() {
        let function = MBIMFunction(state: Self.modem(.mbim))
        var r = Random(state: 0x9E37_79B9_7F4A_7C15)
        let valid: [[UInt8]] =
            [MBIMTestFrames.open(tid: 1)]
            + (1 ... 24).map { MBIMTestFrames.command(tid: 2, cid: UInt32($0), set: $0 % 2 == 0) }
            + [
                MBIMTestFrames.connect(tid: 3), MBIMTestFrames.close(tid: 4),
                MBIMTestFrames.command(
                    tid: 5, cid: 4, set: true,
                    info: le32(2) + le32(0) + le32(24) + le32(8) + le32(0) + le32(0)
                        + Array("1234".utf16).flatMap { [UInt8($0), 0] })
            ]
        for round in 0 ..< 20_000 {
            let frame = Self.mutate(valid[r.below(valid.count)], &r)
            _ = function.receive(frame, now: Double(round))
            if r.below(50) == 0 { function.discardPartialInput() }
        }
        function.discardPartialInput()
        let open = mbimMessages(function.receive(MBIMTestFrames.open(tid: 77), now: 0).flatMap { $0 })
        #expect(open.first.map { readLE32($0, 0) } == 0x8000_0001)
        let caps = mbimMessages(function.receive(MBIMTestFrames.command(tid: 78, cid: 1), now: 0).flatMap { $0 })
        #expect(caps.first.map { readLE32($0, 0) } == 0x8000_0003)
        #expect(caps.first.map { readLE32($0, 8) } == 78)
    }

    @Test func qmiSurvivesMutatedTraffic() {
        let function = QMIFunction(state: Self.modem(.qmi))
        var r = Random(state: 0xD1B5_4A32_D192_ED03)
        var valid: [[UInt8]] = [QMITestFrames.ctl(tid: 1, message: 0x21), QMITestFrames.ctl(tid: 2, message: 0x27)]
        for service: UInt8 in [1, 2, 3, 0x1a] {
            valid.append(QMITestFrames.ctl(tid: 3, message: 0x22, tlvs: [(0x01, [service])]))
            valid.append(QMITestFrames.ctl(tid: 4, message: 0x23, tlvs: [(0x01, [service, 1])]))
            for message: UInt16 in [
                0x01, 0x02, 0x03, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x28, 0x2B, 0x2D, 0x2E, 0x3C, 0x43
            ] {
                valid.append(
                    QMITestFrames.service(
                        service, cid: 1, tid: 5, message: message,
                        tlvs: [(0x01, [1, 4, 0x31, 0x32, 0x33, 0x34]), (0x14, Array("internet".utf8)), (0x19, [4])]))
            }
        }
        for _ in 0 ..< 20_000 {
            let frame = Self.mutate(valid[r.below(valid.count)], &r)
            _ = function.receive(frame, now: 0)
            if r.below(50) == 0 { function.discardPartialInput() }
        }
        function.discardPartialInput()
        let reply = qmiFrames(
            function.receive(QMITestFrames.ctl(tid: 9, message: 0x22, tlvs: [(0x01, [0x02])]), now: 0).flatMap { $0 })
        #expect(reply.first?.messageID == 0x22)
        #expect(reply.first?.error == 0)
    }
}
