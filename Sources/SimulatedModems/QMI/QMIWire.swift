import SystemSupport

/// QMI services the simulator serves.
enum QMIService: UInt8 {
    case ctl = 0x00, wds = 0x01, dms = 0x02, nas = 0x03, uim = 0x0b, loc = 0x10, wda = 0x1a
}

/// QMI protocol error codes used by the simulator (libqmi's QmiProtocolError).
enum QMIError: UInt16 {
    case none = 0, malformedMessage = 1, internalError = 3, clientIDsExhausted = 5, invalidClientID = 7
    case invalidHandle = 9, invalidPinID = 11, incorrectPin = 12, noNetworkFound = 13, callFailed = 14
    case outOfCall = 15, missingArgument = 17, noEffect = 26, invalidServiceType = 31, pinBlocked = 35
    case uimUninitialized = 37, invalidArgument = 48, deviceNotReady = 52, invalidQMICommand = 71
    case simFileNotFound = 80, accessDenied = 82, pinRestriction = 104
}

/// One TLV of a QMI message.
struct QMITLV {
    var type: UInt8
    var value: [UInt8]

    init(_ type: UInt8, _ value: [UInt8]) { self.type = type; self.value = value }
    init(_ type: UInt8, u8 v: UInt8) { self.init(type, [v]) }
    init(_ type: UInt8, u16 v: UInt16) { var w = ByteWriter(); w.u16(v); self.init(type, w.bytes) }
    init(_ type: UInt8, u32 v: UInt32) { var w = ByteWriter(); w.u32(v); self.init(type, w.bytes) }
    /// A whole-TLV string (no length prefix), as libqmi reads top-level strings.
    init(_ type: UInt8, string s: String) { self.init(type, Array(s.utf8)) }
    /// An IPv4 address as QMI carries it: a little-endian u32 of the address's host value.
    init?(_ type: UInt8, ipv4 text: String) {
        guard let b = IPAddress.ipv4Bytes(text) else { return nil }
        self.init(type, [b[3], b[2], b[1], b[0]])
    }
}

/// A parsed QMUX request.
struct QMIRequest {
    var service: UInt8
    var clientID: UInt8
    var transactionID: UInt16
    var messageID: UInt16
    var tlvs: [UInt8: [UInt8]]
}

/// Builds and parses QMUX frames (marker 0x01, length, control flags, service, client id, then
/// the service's SDU header: CTL has an 8-bit transaction id, other services a 16-bit one).
enum QMUX {
    /// Longest TLV value the simulator sends.
    static let maxTLVValue = 2048

    /// A response (or, with `indication`, an indication) from `service` to `clientID`.
    static func frame(
        service: UInt8, clientID: UInt8, transactionID: UInt16, messageID: UInt16,
        tlvs: [QMITLV], indication: Bool = false
    ) -> [UInt8] {
        var body = ByteWriter()
        for tlv in tlvs {
            // Scenario strings are not bounded: keep every TLV, and so the frame, representable.
            let value = tlv.value.prefix(Self.maxTLVValue)
            body.u8(tlv.type)
            body.u16(UInt16(value.count))
            body.append(Array(value))
        }
        var sdu = ByteWriter()
        if service == QMIService.ctl.rawValue {
            sdu.u8(indication ? 0x02 : 0x01)
            sdu.u8(UInt8(truncatingIfNeeded: transactionID))
        } else {
            sdu.u8(indication ? 0x04 : 0x02)
            sdu.u16(transactionID)
        }
        sdu.u16(messageID)
        sdu.u16(UInt16(body.bytes.count))
        sdu.append(body.bytes)
        var w = ByteWriter()
        w.u8(0x01)
        w.u16(UInt16(5 + sdu.bytes.count))
        w.u8(0x80)
        w.u8(service)
        w.u8(clientID)
        w.append(sdu.bytes)
        return w.bytes
    }

    /// The result TLV (0x02): success, or failure with `error`.
    static func result(_ error: QMIError) -> QMITLV {
        var w = ByteWriter()
        w.u16(error == .none ? 0 : 1)
        w.u16(error.rawValue)
        return QMITLV(0x02, w.bytes)
    }

    /// Parses one complete frame; nil when its headers or TLVs are inconsistent.
    static func parse(_ frame: [UInt8]) -> QMIRequest? {
        let r = ByteReader(frame)
        guard r.u8(at: 0) == 0x01, let service = r.u8(at: 4), let cid = r.u8(at: 5) else { return nil }
        let isCTL = service == QMIService.ctl.rawValue
        let header = isCTL ? 12 : 13
        guard let tid = isCTL ? r.u8(at: 7).map(UInt16.init) : r.u16(at: 7),
            let message = r.u16(at: isCTL ? 8 : 9), let length = r.u16(at: isCTL ? 10 : 11),
            header + Int(length) <= frame.count
        else { return nil }
        var tlvs: [UInt8: [UInt8]] = [:]
        var o = header
        let end = header + Int(length)
        while o < end {
            guard let type = r.u8(at: o), let n = r.u16(at: o + 1), o + 3 + Int(n) <= end,
                let value = r.slice(o + 3, Int(n))
            else { return nil }
            tlvs[type] = value
            o += 3 + Int(n)
        }
        return QMIRequest(service: service, clientID: cid, transactionID: tid, messageID: message, tlvs: tlvs)
    }
}
