import CellpathCore

/// What a check concluded, as the exit code tells it: 0 verified, 1 not verified, 2 verified
/// but the SIM changed within the period. A check that could not conclude is a failure instead.
public enum CheckOutcome: String, Sendable, Codable {
    /// The number is the SIM's (and, where asked, the SIM did not change).
    case verified
    /// The number is not the SIM's.
    case notVerified = "not_verified"
    /// The number is the SIM's, but the SIM changed within the period (for a SIMCheck: it changed).
    case simChanged = "sim_changed"

    /// The outcome a completed check's verdict means for `product`, or why there is none (a
    /// check in ERROR or EXPIRED, or an answer without the fields the product needs).
    public init(_ product: CheckProduct, verdict: CheckVerdict) throws(CellpathError) {
        switch verdict.status?.uppercased() {
        case "EXPIRED":
            throw CellpathError(
                .dataError, "the check expired before it completed",
                hint: "create a new check and open its check_url at once")
        case "ERROR":
            let code = verdict.errorCode ?? "no error code"
            let kind: FailureKind = code == "mno_user_not_found" ? .dataError : .unavailable
            throw CellpathError(
                kind, "the check ended in ERROR (\(code.terminalSafe))",
                hint: code == "mno_user_not_found" ? "the operator does not know this number" : nil)
        default:
            break
        }
        switch product {
        case .simCheck:
            guard let noChange = verdict.noSimChange else { throw Self.missing("no_sim_change") }
            self = noChange ? .verified : .simChanged
        case .phoneCheck:
            guard let match = verdict.match else { throw Self.missing("match") }
            self = match ? .verified : .notVerified
        case .subscriberCheck:
            guard let match = verdict.match else { throw Self.missing("match") }
            self = !match ? .notVerified : verdict.noSimChange == false ? .simChanged : .verified
        }
    }

    private static func missing(_ field: String) -> CellpathError {
        CellpathError(
            .protocolError, "the check's result has no '\(field)'",
            hint: "the backend's answer is not a completed check")
    }
}
