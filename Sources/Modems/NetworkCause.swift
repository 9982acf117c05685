import CQMI

/// The network's reasons for refusing a connection (3GPP TS 24.008 session management causes),
/// as both protocols carry them.
enum NetworkCause {
    /// The cause's name (`regular-deactivation`), from libqmi's table of 3GPP causes, which
    /// also names those that libmbim's NwError does not.
    static func name(_ cause: Int) -> String? {
        guard let code = Int16(exactly: cause) else { return nil }
        return qmi_wds_verbose_call_end_reason_get_string(QMI_WDS_VERBOSE_CALL_END_REASON_TYPE_3GPP, code).map {
            String(cString: $0)
        }
    }

    /// What to try when the network refuses a connection with `cause`.
    static func hint(_ cause: Int) -> String {
        switch cause {
        case 27: "check the APN (--apn): the network does not know it"
        case 29, 33:
            "the subscription does not allow this APN, or its user name and password (--user, --password-file) are wrong"
        case 50: "the network allows IPv4 only on this APN: use --ip-type ipv4 (or ipv4v6, which it narrows to IPv4)"
        case 51: "the network allows IPv6 only on this APN: use --ip-type ipv6 (or ipv4v6, which it narrows to IPv6)"
        default: "retry later; if it persists, ask the operator about the SIM's data subscription"
        }
    }
}
