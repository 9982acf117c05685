import CMBIM
import CQMI

/// libmbim called directly: what it makes of a message, and messages it builds.
public enum MBIMOracle {
    /// The header of a message libmbim accepts (`mbim_message_new` + `mbim_message_validate`).
    public struct Message: Equatable {
        public var type: UInt32
        public var transactionID: UInt32

        public init(type: UInt32, transactionID: UInt32) {
            self.type = type
            self.transactionID = transactionID
        }
    }

    /// `bytes` read as one MBIM message; nil when libmbim finds it invalid.
    public static func validate(_ bytes: [UInt8]) -> Message? {
        guard bytes.count >= 12,
            let message = bytes.withUnsafeBufferPointer({ mbim_message_new($0.baseAddress, UInt32($0.count)) })
        else { return nil }
        defer { mbim_message_unref(message) }
        var error: UnsafeMutablePointer<GError>?
        guard mbim_message_validate(message, &error) != 0 else {
            g_clear_error(&error)
            return nil
        }
        return Message(
            type: mbim_message_get_message_type(message).rawValue,
            transactionID: mbim_message_get_transaction_id(message))
    }

    /// The service and CID of a complete COMMAND_DONE, and whether its status is success.
    public static func commandDone(_ bytes: [UInt8]) -> (isBasicConnect: Bool, cid: UInt32, success: Bool)? {
        guard validate(bytes)?.type == MBIM_MESSAGE_TYPE_COMMAND_DONE.rawValue,
            let message = bytes.withUnsafeBufferPointer({ mbim_message_new($0.baseAddress, UInt32($0.count)) })
        else { return nil }
        defer { mbim_message_unref(message) }
        var error: UnsafeMutablePointer<GError>?
        let success = mbim_message_command_done_get_result(message, &error) != 0
        g_clear_error(&error)
        return (
            mbim_message_command_done_get_service(message) == MBIM_SERVICE_BASIC_CONNECT,
            mbim_message_command_done_get_cid(message), success
        )
    }

    /// OPEN with `transactionID`, as libmbim builds it.
    public static func open(transactionID: UInt32) -> [UInt8] {
        raw(mbim_message_open_new(transactionID, 4096))
    }

    /// DEVICE_CAPS query with `transactionID`, as libmbim builds it.
    public static func deviceCapsQuery(transactionID: UInt32) -> [UInt8] {
        let message = mbim_message_device_caps_query_new(nil)
        mbim_message_set_transaction_id(message, transactionID)
        return raw(message)
    }

    private static func raw(_ message: OpaquePointer?) -> [UInt8] {
        guard let message else { return [] }
        defer { mbim_message_unref(message) }
        var length: UInt32 = 0
        guard let data = mbim_message_get_raw(message, &length, nil) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(length)))
    }
}

/// libqmi called directly: what it makes of a QMUX frame, and frames it builds.
public enum QMIOracle {
    /// The header fields of a frame libqmi accepts.
    public struct Message: Equatable {
        public var service: UInt8
        public var clientID: UInt8
        public var transactionID: UInt16
        public var messageID: UInt16
    }

    /// `bytes` read as QMUX frames by `qmi_message_new_from_raw`: the first message and how many
    /// bytes it took; nil when libqmi refuses it or it is incomplete.
    public static func parse(_ bytes: [UInt8]) -> (message: Message, consumed: Int)? {
        guard let raw = g_byte_array_new() else { return nil }
        defer { g_byte_array_unref(raw) }
        bytes.withUnsafeBufferPointer { _ = g_byte_array_append(raw, $0.baseAddress, UInt32($0.count)) }
        var error: UnsafeMutablePointer<GError>?
        guard let message = qmi_message_new_from_raw(raw, &error) else {
            g_clear_error(&error)
            return nil
        }
        defer { qmi_message_unref(message) }
        let parsed = Message(
            service: UInt8(truncatingIfNeeded: qmi_message_get_service(message).rawValue),
            clientID: qmi_message_get_client_id(message), transactionID: qmi_message_get_transaction_id(message),
            messageID: qmi_message_get_message_id(message))
        return (parsed, bytes.count - Int(raw.pointee.len))
    }

    /// A request frame as libqmi builds it, with one TLV per element of `tlvs`.
    public static func request(
        service: UInt8, clientID: UInt8, transactionID: UInt16, messageID: UInt16,
        tlvs: [(type: UInt8, value: [UInt8])]
    ) -> [UInt8] {
        guard let message = qmi_message_new(QmiService(rawValue: Int32(service)), clientID, transactionID, messageID)
        else { return [] }
        defer { qmi_message_unref(message) }
        for tlv in tlvs {
            let offset = qmi_message_tlv_write_init(message, tlv.type, nil)
            guard offset != 0 else { return [] }
            for byte in tlv.value { _ = qmi_message_tlv_write_guint8(message, byte, nil) }
            guard qmi_message_tlv_write_complete(message, offset, nil) != 0 else { return [] }
        }
        var length: Int = 0
        guard let data = qmi_message_get_raw(message, &length, nil) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }
}

/// The text libmbim and libqmi trace for a message (their `get_printable_full`, which their traces print line by line).
public enum ModemTraceOracle {
    /// libmbim's trace of the Basic Connect PIN set that enters `pin`, as cellpath sends it; nil when libmbim cannot build it.
    public static func pinEntry(_ pin: String) -> String? {
        guard let message = mbim_message_pin_set_new(MBIM_PIN_TYPE_PIN1, MBIM_PIN_OPERATION_ENTER, pin, "", nil) else {
            return nil
        }
        defer { mbim_message_unref(message) }
        guard let text = mbim_message_get_printable_full(message, 1, 0, ">>>>>> ", 0, nil) else { return nil }
        defer { g_free(text) }
        return String(cString: text)
    }

    /// libqmi's trace of a successful DMS Get MSISDN response whose MSISDN TLV holds `msisdn`
    /// and, when there is one, whose IMSI TLV (0x11, which libqmi 1.32 has no name for) holds
    /// `imsi`; nil when libqmi refuses the frame.
    public static func msisdnResponse(_ msisdn: [UInt8], imsi: [UInt8] = []) -> String? {
        var tlvs: [UInt8] = [0x02, 4, 0, 0, 0, 0, 0] + [0x01] + littleEndian(UInt16(msisdn.count)) + msisdn
        if !imsi.isEmpty { tlvs += [0x11] + littleEndian(UInt16(imsi.count)) + imsi }
        let service: [UInt8] = [0x02] + littleEndian(1) + littleEndian(0x0024) + littleEndian(UInt16(tlvs.count)) + tlvs
        let frame: [UInt8] = [0x01] + littleEndian(UInt16(5 + service.count)) + [0x80, 0x02, 0x01] + service
        guard let raw = g_byte_array_new() else { return nil }
        defer { g_byte_array_unref(raw) }
        frame.withUnsafeBufferPointer { _ = g_byte_array_append(raw, $0.baseAddress, UInt32($0.count)) }
        guard let message = qmi_message_new_from_raw(raw, nil) else { return nil }
        defer { qmi_message_unref(message) }
        guard let text = qmi_message_get_printable_full(message, nil, "<<<<<< ") else { return nil }
        defer { g_free(text) }
        return String(cString: text)
    }

    private static func littleEndian(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
}
