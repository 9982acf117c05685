/// The result of a check in sandbox mode, decided by the checked number alone, as tru.ID's
/// sandbox rules say: ending in `99` → an error; in an even digit → a successful check (match,
/// no SIM change); in an odd digit → a failed one (no match, SIM changed within the hour).
enum SandboxOutcome: Sendable, Equatable {
    case success, failure, error

    /// The `error_code` of a sandbox check that ends in an error.
    static let errorCode = "mno_server_error"

    init(phoneNumber: String) {
        if phoneNumber.hasSuffix("99") {
            self = .error
        } else if let last = phoneNumber.last?.wholeNumberValue, last.isMultiple(of: 2) {
            self = .success
        } else {
            self = .failure
        }
    }

    /// The SIM-change answer: none on success, a change within the last hour otherwise.
    func simChange(period: Int) -> SimChangeWindow {
        SimChangeWindow(minutesAgo: self == .success ? nil : 0, period: period)
    }
}
