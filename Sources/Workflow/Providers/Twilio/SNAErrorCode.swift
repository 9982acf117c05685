import CellularHTTP

/// The text a Twilio SNA URL answers at the end of its chain (`ErrorCode=0&ErrorDescription=Success&Carrier=VZW`):
/// 0 means the carrier decided (the backend now asks VerificationCheck), a negative code is a
/// failure of the device leg, named here as Twilio's SNA error-handling guide names it.
public struct SNAErrorCode: Sendable, Equatable {
    public var code: Int
    public var description: String?
    public var carrier: String?

    /// The answer in a text body; nil when the body has no integer `ErrorCode`.
    public init?(body: String) {
        // A form body reads as a query: percent-decoded, `+` a space.
        let pairs = Credentials.queryItems(of: "?" + body.trimmingTrailingNewlines)
        guard let text = pairs.first(where: { $0.name == "ErrorCode" })?.value, let code = Int(text) else {
            return nil
        }
        self.code = code
        description = pairs.first { $0.name == "ErrorDescription" }?.value
        carrier = pairs.first { $0.name == "Carrier" }?.value
    }

    /// What a negative code means; nil for 0 and for codes Twilio does not document.
    public var meaning: String? {
        switch code {
        case -10: "generic SNA failure"
        case -30: "the carrier does not support SNA"
        case -31: "SNA is unsupported on this connection (e.g. Wi-Fi)"
        case -32: "dual SIM: the number is not the data SIM's"
        case -33: "the carrier sent no subscriber header"
        case -34: "the carrier failed"
        case -40: "invalid phone number"
        default: nil
        }
    }

    /// The ending as a callback of the verification `checkID`: no error for 0, else `error`
    /// is the code and `error_description` its meaning with Twilio's words and the carrier.
    func callback(checkID: String) -> CheckCallback {
        guard code != 0 else { return CheckCallback(checkID: checkID) }
        let words = [meaning, description, carrier.map { "carrier \($0)" }].compactMap { $0 }
        return CheckCallback(
            checkID: checkID, error: "ErrorCode=\(code)",
            errorDescription: words.isEmpty ? nil : words.joined(separator: "; "))
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var text = Substring(self)
        while let last = text.last, last == "\n" || last == "\r" { text = text.dropLast() }
        return String(text)
    }
}
