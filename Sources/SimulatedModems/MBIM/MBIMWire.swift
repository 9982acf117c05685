/// MBIM 1.0 constants (USB MBIM 1.0 specification, as libmbim 1.28 names them).
enum MBIMMessageType: UInt32 {
    case open = 1, close = 2, command = 3, hostError = 4
    case openDone = 0x8000_0001, closeDone = 0x8000_0002, commandDone = 0x8000_0003
    case functionError = 0x8000_0004, indicateStatus = 0x8000_0007
}

/// FUNCTION_ERROR / HOST_ERROR codes.
enum MBIMProtocolError: UInt32 {
    case timeoutFragment = 1, fragmentOutOfSequence = 2, lengthMismatch = 3, duplicatedTID = 4
    case notOpened = 5, unknown = 6, cancel = 7, maxTransfer = 8
}

/// COMMAND_DONE status codes used by the simulator.
enum MBIMStatus: UInt32 {
    case success = 0, busy = 1, failure = 2, simNotInserted = 3, badSIM = 4, pinRequired = 5
    case pinDisabled = 6, notRegistered = 7, noDeviceSupport = 9, packetServiceDetached = 12
    case maxActivatedContexts = 13, notInitialized = 14, contextNotActivated = 16
    case invalidAccessString = 18, radioPowerOff = 20, invalidParameters = 21
    case operationNotAllowed = 28
}

/// Basic Connect command ids.
enum MBIMBasicConnectCID: UInt32 {
    case deviceCaps = 1, subscriberReadyStatus = 2, radioState = 3, pin = 4, pinList = 5
    case homeProvider = 6, registerState = 9, packetService = 10, signalState = 11, connect = 12
    case provisionedContexts = 13, ipConfiguration = 15, deviceServices = 16
    case deviceServiceSubscribeList = 19, packetStatistics = 20
}

/// MS Basic Connect Extensions command ids (libmbim's MbimCidMsBasicConnectExtensions).
enum MBIMExtensionsCID: UInt32 {
    case sysCaps = 5, deviceCaps = 6, deviceSlotMappings = 7, slotInfoStatus = 8, baseStationsInfo = 11, version = 15
}

/// MBIM_UICC_SLOT_STATE values of Slot Info Status.
enum MBIMSlotState: UInt32 {
    case empty = 3, active = 5, activeESIM = 7, activeESIMNoProfiles = 8
}

enum MBIMUUID {
    /// a289cc33-bcbb-8b4f-b6b0-133ec2aae6df
    static let basicConnect: [UInt8] = [
        0xa2, 0x89, 0xcc, 0x33, 0xbc, 0xbb, 0x8b, 0x4f,
        0xb6, 0xb0, 0x13, 0x3e, 0xc2, 0xaa, 0xe6, 0xdf
    ]
    /// 3d01dcc5-fef5-4d05-0d3a-bef7058e9aaf (MS Basic Connect Extensions)
    static let msBasicConnectExtensions: [UInt8] = [
        0x3d, 0x01, 0xdc, 0xc5, 0xfe, 0xf5, 0x4d, 0x05,
        0x0d, 0x3a, 0xbe, 0xf7, 0x05, 0x8e, 0x9a, 0xaf
    ]
    /// d1a30bc2-f97a-6e43-bf65-c7e24fb0f0d3 (QMI messages tunnelled over MBIM, CID 1)
    static let qmi: [UInt8] = [
        0xd1, 0xa3, 0x0b, 0xc2, 0xf9, 0x7a, 0x6e, 0x43,
        0xbf, 0x65, 0xc7, 0xe2, 0x4f, 0xb0, 0xf0, 0xd3
    ]
    /// 7e5e2a7e-4e6f-7272-736b-656e7e5e2a7e (context type "internet")
    static let contextInternet: [UInt8] = [
        0x7e, 0x5e, 0x2a, 0x7e, 0x4e, 0x6f, 0x72, 0x72,
        0x73, 0x6b, 0x65, 0x6e, 0x7e, 0x5e, 0x2a, 0x7e
    ]
}

/// Builds an MBIM information buffer: a fixed part with (offset, length) references into a
/// variable part of 4-byte aligned data, offsets counted from the buffer's start.
struct MBIMInfoBuilder {
    private var fixed = ByteWriter()
    private var pending: [(position: Int, data: [UInt8], withLength: Bool)] = []

    mutating func u32(_ v: UInt32) { fixed.u32(v) }
    mutating func u64(_ v: UInt64) { fixed.u64(v) }
    mutating func bytes(_ b: [UInt8]) { fixed.append(b) }

    /// A UTF-16LE string reference (offset, length); empty strings are (0, 0).
    mutating func string(_ s: String) {
        reference(utf16LE(s), withLength: true)
    }

    /// An (offset, length) reference to a struct (one element of a ref-struct-array).
    mutating func structure(_ data: [UInt8]) { reference(data, withLength: true) }

    /// An offset-only reference (ref-ipv4, struct-array, ipv4-array); empty data is offset 0.
    mutating func offset(to data: [UInt8]) { reference(data, withLength: false) }

    /// An MBIMEx v3 TLV (type, reserved, padding length, data length, data padded to 4 bytes)
    /// inline in the fixed part, as libmbim reads `tlv-string` and `tlv-guint16-array` fields.
    mutating func tlv(type: UInt16, _ data: [UInt8]) {
        let padding = (4 - data.count % 4) % 4
        fixed.u16(type)
        fixed.u8(0)
        fixed.u8(UInt8(padding))
        fixed.u32(UInt32(data.count))
        fixed.append(data + [UInt8](repeating: 0, count: padding))
    }

    /// A UTF-16LE string TLV (MBIM_TLV_TYPE_WCHAR_STR).
    mutating func tlvString(_ s: String) { tlv(type: 10, utf16LE(s)) }

    private func utf16LE(_ s: String) -> [UInt8] {
        s.utf16.flatMap { [UInt8($0 & 0xff), UInt8($0 >> 8)] }
    }

    private mutating func reference(_ data: [UInt8], withLength: Bool) {
        let position = fixed.bytes.count
        fixed.u32(0)
        if withLength { fixed.u32(UInt32(data.count)) }
        if !data.isEmpty { pending.append((position, data, withLength)) }
    }

    func build() -> [UInt8] {
        var out = fixed
        for item in pending {
            while out.bytes.count % 4 != 0 { out.u8(0) }
            out.patch32(UInt32(out.bytes.count), at: item.position)
            out.append(item.data)
        }
        while out.bytes.count % 4 != 0 { out.u8(0) }
        return out.bytes
    }
}

/// Reads fields of a received information buffer.
struct MBIMInfoReader {
    let reader: ByteReader
    init(_ bytes: [UInt8]) { reader = ByteReader(bytes) }

    func u32(at o: Int) -> UInt32? { reader.u32(at: o) }

    /// The UTF-16LE string referenced by the (offset, length) pair at `o`; nil if out of bounds.
    func string(at o: Int) -> String? {
        guard let offset = reader.u32(at: o), let length = reader.u32(at: o + 4) else { return nil }
        if length == 0 { return "" }
        guard length % 2 == 0, let data = reader.slice(Int(offset), Int(length)) else { return nil }
        return Self.utf16LE(data)
    }

    /// The UTF-16LE string of the TLV at `o` (MBIMEx v3 `tlv-string`); nil if it is not one.
    func tlvString(at o: Int) -> String? {
        guard let type = reader.u16(at: o), type == 10, let length = reader.u32(at: o + 4),
            length % 2 == 0, let data = reader.slice(o + 8, Int(length))
        else { return nil }
        return Self.utf16LE(data)
    }

    private static func utf16LE(_ data: [UInt8]) -> String {
        let units = stride(from: 0, to: data.count, by: 2).map { UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8 }
        return String(decoding: units, as: UTF16.self)
    }
}

/// Frames MBIM control messages, splitting any longer than the max control transfer.
enum MBIMFramer {
    /// A complete message: header (type, length, transaction id) followed by `body`.
    static func message(_ type: MBIMMessageType, tid: UInt32, body: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.u32(type.rawValue)
        w.u32(UInt32(12 + body.count))
        w.u32(tid)
        w.append(body)
        return w.bytes
    }

    /// COMMAND_DONE or INDICATE_STATUS, fragmented to `maxTransfer` bytes per message.
    static func fragmented(
        _ type: MBIMMessageType, tid: UInt32, service: [UInt8], cid: UInt32,
        status: UInt32?, info: [UInt8], maxTransfer: Int
    ) -> [[UInt8]] {
        var payload = ByteWriter()
        payload.append(service)
        payload.u32(cid)
        if let status { payload.u32(status) }
        payload.u32(UInt32(info.count))
        payload.append(info)
        let capacity = max(1, maxTransfer - 20)
        let chunks = stride(from: 0, to: max(payload.bytes.count, 1), by: capacity).map {
            Array(payload.bytes[$0 ..< min($0 + capacity, payload.bytes.count)])
        }
        return chunks.enumerated().map { index, chunk in
            var body = ByteWriter()
            body.u32(UInt32(chunks.count))
            body.u32(UInt32(index))
            body.append(chunk)
            return message(type, tid: tid, body: body.bytes)
        }
    }
}
