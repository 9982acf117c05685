import CQMI
import Testing

@testable import Modems

/// The masking of what libqmi and libmbim trace of personal data (`-v` without `--verbose-full`).
@Suite struct TraceRedactionTests {
    /// libqmi's trace of a DMS Get MSISDN response holding `msisdn` (and `imsi` in TLV 0x11, as
    /// modems answer it), split into lines as the log handler splits it.
    private static func msisdnTrace(_ msisdn: String, imsi: String? = nil) throws -> [String] {
        let value = Array(msisdn.utf8)
        var tlvs: [UInt8] = [0x02, 4, 0, 0, 0, 0, 0, 0x01, UInt8(value.count), 0] + value
        if let imsi { tlvs += [0x11, UInt8(imsi.utf8.count), 0] + Array(imsi.utf8) }
        let service: [UInt8] = [0x02, 1, 0, 0x24, 0, UInt8(tlvs.count), 0] + tlvs
        let frame: [UInt8] = [0x01, UInt8(5 + service.count), 0, 0x80, 0x02, 0x01] + service
        let raw = try #require(g_byte_array_new())
        defer { g_byte_array_unref(raw) }
        frame.withUnsafeBufferPointer { _ = g_byte_array_append(raw, $0.baseAddress, UInt32($0.count)) }
        let message = try #require(qmi_message_new_from_raw(raw, nil))
        defer { qmi_message_unref(message) }
        let text = try #require(qmi_message_get_printable_full(message, nil, "<<<<<< "))
        defer { g_free(text) }
        return String(cString: text).split(separator: "\n").map(String.init)
    }

    @Test func theMSISDNIsMaskedInItsValueAndItsTranslation() throws {
        let lines = try Self.msisdnTrace("+447700900001")
        #expect(lines.joined().contains("+447700900001"), "libqmi prints the MSISDN: the masking is needed")
        let masked = TraceRedaction.redact(lines)
        #expect(masked.count == lines.count)
        #expect(!masked.joined(separator: "\n").contains("447700900001"))
        #expect(!masked.joined(separator: "\n").contains("34:34:37:37"))
        #expect(masked.contains("<<<<<<   value      = ###") && masked.contains("<<<<<<   translated = ###"))
        #expect(masked.contains("<<<<<<   translated = SUCCESS"), "other TLVs are left as they are")
    }

    // Found by the `modem-trace` fuzz target (docs/fuzzing.md): libqmi prints a line feed of the
    // MSISDN as it is, so the rest of the number was a line of its own that was not masked.
    @Test func anMSISDNWithLineFeedsIsMaskedOnEveryLineItTakes() throws {
        let lines = try Self.msisdnTrace("+4477\n0090\n0001")
        #expect(lines.contains("0090") && lines.contains("0001"))
        let masked = TraceRedaction.redact(lines)
        #expect(masked.count == lines.count)
        let text = masked.joined(separator: "\n")
        #expect(!text.contains("4477") && !text.contains("0090") && !text.contains("0001"), "\(text)")
    }

    // libqmi 1.32 has no name for Get MSISDN's IMSI TLV and prints its bytes in hexadecimal.
    @Test func aTLVThatLibqmiCannotNameIsMasked() throws {
        let lines = try Self.msisdnTrace("+447700900001", imsi: "234150000000001")
        let imsiBytes = "32:33:34:31:35:30:30:30:30:30:30:30:30:30:31"
        #expect(
            lines.contains { $0.contains(imsiBytes) } && lines.contains { $0.hasSuffix("type   = 0x11") }, "\(lines)")
        let masked = TraceRedaction.redact(lines)
        #expect(!masked.joined().contains(imsiBytes), "\(masked)")
        #expect(masked.contains("<<<<<<   value  = ###"))
        #expect(masked.contains("<<<<<<   type   = 0x11"), "the TLV's type is kept")
    }

    @Test func theMBIMPINFieldsAreMasked() {
        let masked = TraceRedaction.redact([
            ">>>>>>   Pin = '1234'", ">>>>>>   NewPin = '5678'", ">>>>>>   PinType = 'pin1'"
        ])
        #expect(masked == [">>>>>>   Pin = '###'", ">>>>>>   NewPin = '###'", ">>>>>>   PinType = 'pin1'"])
    }
}
