import FuzzOracles
@testable import Modems

/// The modem layer's masking of libmbim's and libqmi's traces (`TraceRedaction`, what `-v`
/// prints of every message): the libraries trace some personal data although asked not to. Input:
/// a control byte, then an MSISDN a modem answers (libqmi's trace of DMS Get MSISDN), a PIN
/// (libmbim's trace of the PIN set that enters it), or trace lines of the input's own.
///
/// Invariants: no piece of 4 or more characters of the MSISDN or the PIN (cut at
/// control characters), nor the MSISDN's bytes in hexadecimal, is left in the masked trace, unless
/// the trace of the same message with those characters replaced by `#` holds it too, masked or
/// not (what the input holds may itself read `= ###`); masking keeps
/// the number of lines, and changes a line only to end it with `###` or `'###'`.
enum ModemTraceTarget: FuzzTarget {
    static let name = "modem-trace"

    static func run(_ input: [UInt8]) {
        var input = FuzzInput(input)
        switch input.byte() % 3 {
        case 0:
            let msisdn = Array(input.remaining().prefix(200))
            guard let trace = ModemTraceOracle.msisdnResponse(msisdn),
                  let baseline = ModemTraceOracle.msisdnResponse(msisdn.map { _ in UInt8(ascii: "#") }) else { return }
            let masked = masking(trace)
            requireHidden(String(decoding: msisdn, as: UTF8.self), in: masked, baseline: baseline + masking(baseline), what: "MSISDN")
            let hex = msisdn.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined(separator: ":")
            if msisdn.count >= 2, !baseline.lowercased().contains(hex) {
                require(!masked.lowercased().contains(hex), "the MSISDN's bytes \(hex) are in the masked trace:\n\(shown(masked))")
            }
        case 1:
            // The PINs `bearer up --pin-file` accepts: 4 to 8 ASCII digits.
            let pin = input.line()
            guard (4...8).contains(pin.count), pin.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let trace = ModemTraceOracle.pinEntry(pin), let baseline = ModemTraceOracle.pinEntry(hashes(pin)) else { return }
            requireHidden(pin, in: masking(trace), baseline: baseline + masking(baseline), what: "PIN")
        default:
            let lines = input.remainingLines()
            let masked = TraceRedaction.redact(lines)
            require(masked.count == lines.count, "masking turned \(lines.count) lines into \(masked.count)")
            for (line, out) in zip(lines, masked) where line != out {
                require(out.hasSuffix("###") || out.hasSuffix("'###'"), "masking turned \(shown(line)) into \(shown(out))")
            }
        }
    }

    /// `trace` as the modem layer logs it: split into lines, masked, joined again.
    private static func masking(_ trace: String) -> String {
        TraceRedaction.redact(trace.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)).joined(separator: "\n")
    }

    /// Fails when a piece of `secret` (cut at control characters) of 4 or more characters is in `masked` but not in `baseline`.
    private static func requireHidden(_ secret: String, in masked: String, baseline: String, what: String) {
        for piece in secret.split(whereSeparator: { $0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }) where piece.count >= 4 {
            guard !baseline.contains(piece) else { continue }
            require(!masked.contains(piece), "the \(what)'s \(shown(String(piece))) is in the masked trace:\n\(shown(masked))")
        }
    }

    private static func hashes(_ text: String) -> String { String(repeating: "#", count: text.count) }
}
