import FuzzOracles

@testable import Modems

/// The modem layer's masking of libmbim's and libqmi's traces (`TraceRedaction`, what `-v`
/// prints of every message): the libraries trace some personal data although asked not to. Input:
/// a control byte, then an MSISDN and an IMSI a modem answers, split by a NUL byte (libqmi's
/// trace of DMS Get MSISDN, which has no name for the IMSI's TLV and prints its bytes), a PIN
/// (libmbim's trace of the PIN set that enters it), or trace lines of the input's own.
///
/// Invariants: no piece of 4 or more characters of the MSISDN, the IMSI or the PIN (cut at
/// control characters), nor the MSISDN's or IMSI's bytes in hexadecimal, is left in the masked trace, unless
/// the trace of the same message with those characters replaced by `#` holds it too, masked or
/// not (what the input holds may itself read `= ###`); masking keeps
/// the number of lines, and changes a line only to end it with `###` or `'###'`.
enum ModemTraceTarget: FuzzTarget {
    static let name = "modem-trace"

    static func run(_ input: [UInt8]) {
        var input = FuzzInput(input)
        switch input.byte() % 3 {
        case 0:
            // The MSISDN, then after a NUL byte the IMSI.
            let parts = input.remaining().prefix(400).split(
                separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
            let msisdn = Array(parts[0].prefix(200)), imsi = parts.count > 1 ? Array(parts[1].prefix(200)) : []
            let hashed = { (bytes: [UInt8]) in bytes.map { _ in UInt8(ascii: "#") } }
            guard let trace = ModemTraceOracle.msisdnResponse(msisdn, imsi: imsi),
                let baseline = ModemTraceOracle.msisdnResponse(hashed(msisdn), imsi: hashed(imsi))
            else { return }
            let masked = masking(trace), around = baseline + masking(baseline)
            for (name, secret) in [("MSISDN", msisdn), ("IMSI", imsi)] {
                requireHidden(String(decoding: secret, as: UTF8.self), in: masked, baseline: around, what: name)
                let hex = secret.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined(
                    separator: ":")
                if secret.count >= 2, !around.lowercased().contains(hex) {
                    require(
                        !masked.lowercased().contains(hex),
                        "the \(name)'s bytes \(hex) are in the masked trace:\n\(shown(masked))")
                }
            }
        case 1:
            // The PINs `bearer up --pin-file` accepts: 4 to 8 ASCII digits.
            let pin = input.line()
            guard (4 ... 8).contains(pin.count), pin.allSatisfy({ $0.isASCII && $0.isNumber }),
                let trace = ModemTraceOracle.pinEntry(pin), let baseline = ModemTraceOracle.pinEntry(hashes(pin))
            else { return }
            requireHidden(pin, in: masking(trace), baseline: baseline + masking(baseline), what: "PIN")
        default:
            let lines = input.remainingLines()
            let masked = TraceRedaction.redact(lines)
            require(masked.count == lines.count, "masking turned \(lines.count) lines into \(masked.count)")
            for (line, out) in zip(lines, masked) where line != out {
                require(
                    out.hasSuffix("###") || out.hasSuffix("'###'"), "masking turned \(shown(line)) into \(shown(out))")
            }
        }
    }

    /// `trace` as the modem layer logs it: split into lines, masked, joined again.
    private static func masking(_ trace: String) -> String {
        TraceRedaction.redact(trace.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)).joined(
            separator: "\n")
    }

    /// Fails when a piece of `secret` (cut at control characters) of 4 or more characters is in `masked` but not in `baseline`.
    private static func requireHidden(_ secret: String, in masked: String, baseline: String, what: String) {
        for piece in secret.split(whereSeparator: { $0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }
        ) where piece.count >= 4 {
            guard !baseline.contains(piece) else { continue }
            require(
                !masked.contains(piece),
                "the \(what)'s \(shown(String(piece))) is in the masked trace:\n\(shown(masked))")
        }
    }

    private static func hashes(_ text: String) -> String { String(repeating: "#", count: text.count) }
}
