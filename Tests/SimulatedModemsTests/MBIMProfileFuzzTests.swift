import SimulatorScenario
import Testing

@testable import SimulatedModems

/// The MBIM function of the device profiles' extra services (MS Basic Connect Extensions with
/// MBIMEx v3 and slots, QMI over MBIM) fed with mutated frames: it must never trap, and must
/// answer a valid request afterwards.
@Suite("MBIM device profile fuzzing")
struct MBIMProfileFuzzTests {
    static let extensionsService: [UInt8] = [
        0x3d, 0x01, 0xdc, 0xc5, 0xfe, 0xf5, 0x4d, 0x05,
        0x0d, 0x3a, 0xbe, 0xf7, 0x05, 0x8e, 0x9a, 0xaf
    ]
    static let qmiService: [UInt8] = [
        0xd1, 0xa3, 0x0b, 0xc2, 0xf9, 0x7a, 0x6e, 0x43,
        0xbf, 0x65, 0xc7, 0xe2, 0x4f, 0xb0, 0xf0, 0xd3
    ]

    /// A COMMAND of `service`.
    static func command(
        _ service: [UInt8], tid: UInt32, cid: UInt32, set: Bool = false,
        info: [UInt8] = []
    ) -> [UInt8] {
        let body = le32(1) + le32(0) + service + le32(cid) + le32(set ? 1 : 0) + le32(UInt32(info.count)) + info
        return le32(3) + le32(UInt32(12 + body.count)) + le32(tid) + body
    }

    @Test(arguments: [DeviceProfile.Name.dualSIM, .usbMBIMFCCLocked])
    func profileServicesSurviveMutatedTraffic(_ device: DeviceProfile.Name) {
        var modem = SimulatedModem(protocol: .mbim)
        modem.device = device
        modem.secondSlot = device == .dualSIM ? SecondSIMSlot(esim: true, sim: nil) : nil
        let function = MBIMFunction(state: ModemState(index: 0, modem: modem, bearerNetwork: StaticBearerNetwork()))
        var r = ProtocolFuzzTests.Random(state: 0x2545_F491_4F6C_DD1D)
        let version = [UInt8(0x00), 0x01, 0x00, 0x03]
        let slotMapping = le32(1) + le32(12) + le32(4) + le32(1)
        let fccAuthentication = QMITestFrames.service(2, cid: 1, tid: 1, message: 0x555F)
        let valid: [[UInt8]] =
            [
                MBIMTestFrames.open(tid: 1),
                Self.command(Self.extensionsService, tid: 2, cid: 15, info: version)
            ]
            + (5 ... 8).map { Self.command(Self.extensionsService, tid: 3, cid: UInt32($0), info: le32(1)) }
            + [
                Self.command(Self.extensionsService, tid: 4, cid: 7, set: true, info: slotMapping),
                Self.command(Self.qmiService, tid: 5, cid: 1, set: true, info: fccAuthentication),
                Self.command(
                    Self.qmiService, tid: 6, cid: 1, set: true,
                    info: QMITestFrames.ctl(tid: 1, message: 0x22, tlvs: [(0x01, [2])])),
                MBIMTestFrames.connect(tid: 7), MBIMTestFrames.command(tid: 8, cid: 2),
                MBIMTestFrames.command(tid: 9, cid: 3, set: true, info: le32(1))
            ]
        for round in 0 ..< 20_000 {
            _ = function.receive(ProtocolFuzzTests.mutate(valid[r.below(valid.count)], &r), now: Double(round))
            if r.below(50) == 0 { function.discardPartialInput() }
        }
        function.discardPartialInput()
        let open = mbimMessages(function.receive(MBIMTestFrames.open(tid: 77), now: 0).flatMap { $0 })
        #expect(open.first.map { readLE32($0, 0) } == 0x8000_0001)
        let query = Self.command(Self.extensionsService, tid: 78, cid: 6)
        let caps = mbimMessages(function.receive(query, now: 0).flatMap { $0 })
        #expect(caps.first.map { readLE32($0, 0) } == 0x8000_0003)
        #expect(caps.first.map { readLE32($0, 8) } == 78)
    }
}
