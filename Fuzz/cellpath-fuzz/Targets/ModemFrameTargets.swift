import FuzzOracles
import SimulatorScenario

@testable import SimulatedModems

/// The simulated MBIM modem's framing (`MBIMFunction`: header, fragments, info buffers) fed
/// the input as bytes from the host, between an OPEN and a DEVICE_CAPS query that libmbim builds.
///
/// Invariants: every frame the simulator writes is one message libmbim validates
/// (`mbim_message_new` + `mbim_message_validate`), whose length field is its size, within the
/// negotiated maximum transfer; after any input, a libmbim OPEN and DEVICE_CAPS query get
/// OPEN_DONE and a successful COMMAND_DONE for Basic Connect DEVICE_CAPS with the same
/// transaction ids; and when libmbim accepts the whole input as one unfragmented COMMAND, the
/// simulator answers it with COMMAND_DONE (not FUNCTION_ERROR).
enum MBIMFrameTarget: FuzzTarget {
    static let name = "mbim"

    static func run(_ input: [UInt8]) {
        let function = MBIMFunction(
            state: ModemState(index: 0, modem: SimulatedModem(protocol: .mbim), bearerNetwork: StaticBearerNetwork()))
        let opened = function.receive(MBIMOracle.open(transactionID: 1), now: 0)
        require(
            opened.first.flatMap(MBIMOracle.validate) == .init(type: 0x8000_0001, transactionID: 1),
            "a libmbim OPEN got no OPEN_DONE")
        let answers = function.receive(input, now: 1)
        var maxTransfer = 4096
        if input.count >= 16, readLE32(input, 0) == 1 { maxTransfer = max(64, min(4096, Int(readLE32(input, 12)))) }
        for frame in answers where !function.isJunk(frame) {
            require(
                frame.count >= 12 && Int(readLE32(frame, 4)) == frame.count, "a frame's length field is not its size")
            require(frame.count <= max(maxTransfer, 4096), "a frame of \(frame.count) bytes")
            require(MBIMOracle.validate(frame) != nil, "libmbim refuses a frame the simulator wrote: \(hex(frame))")
        }
        if let message = MBIMOracle.validate(input), message.type == 3, input.count >= 20,
            readLE32(input, 4) == input.count,
            readLE32(input, 12) == 1, readLE32(input, 16) == 0
        {
            require(
                answers.contains { readLE32($0, 0) == 0x8000_0003 && readLE32($0, 8) == message.transactionID },
                "a COMMAND libmbim accepts got no COMMAND_DONE: \(hex(input))")
        }
        function.discardPartialInput()
        let reopened = function.receive(MBIMOracle.open(transactionID: 2), now: 2)
        require(
            reopened.first.flatMap(MBIMOracle.validate) == .init(type: 0x8000_0001, transactionID: 2),
            "OPEN after the input got no OPEN_DONE")
        let caps = function.receive(MBIMOracle.deviceCapsQuery(transactionID: 3), now: 3)
        let done = caps.first.flatMap(MBIMOracle.commandDone)
        require(
            done?.isBasicConnect == true && done?.cid == 1 && done?.success == true
                && caps.first.map { readLE32($0, 8) } == 3,
            "DEVICE_CAPS after the input: \(caps.first.map(hex) ?? "no answer")")
    }
}

/// The simulated QMI modem's framing (`QMIFunction`, `QMUX.parse`: QMUX header, CTL and service
/// headers, TLVs), against libqmi's `qmi_message_new_from_raw`.
///
/// Invariants: every frame the simulator writes is exactly one message libqmi reads; a frame
/// libqmi reads whole is one `QMUX.parse` reads, with the same service, client id, transaction
/// id and message id; and after any input, a CTL GET_VERSION_INFO that libqmi builds is answered
/// with the same transaction and message ids.
enum QMIFrameTarget: FuzzTarget {
    static let name = "qmi"

    static func run(_ input: [UInt8]) {
        let function = QMIFunction(
            state: ModemState(index: 0, modem: SimulatedModem(protocol: .qmi), bearerNetwork: StaticBearerNetwork()))
        for frame in function.receive(input, now: 0) where !function.isJunk(frame) {
            let read = QMIOracle.parse(frame)
            require(
                read?.consumed == frame.count,
                "libqmi does not read a frame the simulator wrote as one message: \(hex(frame))")
        }
        if let read = QMIOracle.parse(input), read.consumed == input.count {
            let parsed = QMUX.parse(input)
            require(parsed != nil, "libqmi reads a frame QMUX.parse refuses: \(hex(input))")
            if let parsed {
                require(
                    parsed.service == read.message.service && parsed.clientID == read.message.clientID
                        && parsed.transactionID == read.message.transactionID
                        && parsed.messageID == read.message.messageID,
                    "QMUX.parse and libqmi disagree on the header of \(hex(input))")
            }
        }
        function.discardPartialInput()
        let request = QMIOracle.request(service: 0, clientID: 0, transactionID: 7, messageID: 0x21, tlvs: [])
        let answer = function.receive(request, now: 1).first { !function.isJunk($0) }
        let read = answer.flatMap(QMIOracle.parse)
        require(
            read?.message.transactionID == 7 && read?.message.messageID == 0x21,
            "GET_VERSION_INFO after the input: \(answer.map(hex) ?? "no answer")")
    }
}

func readLE32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    guard offset >= 0, offset + 4 <= bytes.count else { return 0 }
    return (0 ..< 4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.prefix(64).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
        .joined()
        + (bytes.count > 64 ? "…(\(bytes.count) bytes)" : "")
}
