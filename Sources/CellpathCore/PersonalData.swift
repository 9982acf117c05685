/// Whether personal data and secrets may appear in output, logs and traces.
/// `.redacted` is the default; `--verbose-full` selects `.full`.
public enum Disclosure: Sendable, Equatable {
    case redacted
    case full
}

/// The kinds of personal data and secrets cellpath handles.
public enum PersonalDataKind: String, Sendable, CaseIterable {
    case msisdn, imsi, iccid, imei, token, code, cookie, secret, ipAddress
}

extension Disclosure {
    /// Returns `value` unchanged with `.full`; otherwise a mask that keeps just enough to
    /// tell values apart (the last digits of numbers, nothing of secrets).
    public func reveal(_ value: String, as kind: PersonalDataKind) -> String {
        if self == .full || value.isEmpty { return value }
        switch kind {
        case .msisdn, .imsi, .iccid, .imei:
            let keep = min(2, value.count / 4)
            let prefix = value.hasPrefix("+") ? "+" : ""
            return prefix + String(repeating: "•", count: 4) + String(value.suffix(keep))
        case .token, .code, .cookie, .secret:
            return "[redacted]"
        case .ipAddress:
            return value
        }
    }
}
