import CellpathCore
import GLibRuntime
import Modems

/// ModemManager's D-Bus errors (`org.freedesktop.ModemManager1.Error.*`) as `ModemError`s of the
/// same kinds, hence exit codes, as the direct backends give for the same failure: a refusal by
/// the network or the modem is a protocol error (69), a locked or refused PIN a permission error
/// (77), a state that passes or a timeout a temporary one (75).
enum ModemManagerErrors {
    /// The prefix of ModemManager's error names.
    static let prefix = "org.freedesktop.ModemManager1.Error."

    /// `failure` (a GDBus error, whose message is `GDBus.Error:NAME: TEXT`) about `operation`.
    /// The status is the name without the prefix (`MobileEquipment.MissingOrUnknownApn`).
    static func error(_ operation: String, _ failure: GLibError) -> ModemError {
        guard let (name, text) = remoteError(failure.message) else {
            return ModemError(.transport, .unavailable, operation: operation, reason: failure.message)
        }
        guard name.hasPrefix(prefix) else {
            // The bus's own errors: ModemManager went away, or polkit refused the call.
            let kind: FailureKind =
                name.hasSuffix(".AccessDenied") || name.hasSuffix(".AuthFailed") ? .permission : .unavailable
            return ModemError(
                .transport, kind, operation: operation, reason: "\(text) (\(name))",
                hint: kind == .permission ? "ModemManager's polkit policy refused it: run as root" : nil)
        }
        let status = String(name.dropFirst(prefix.count))
        let (kind, reason, hint) = describe(status, text)
        return ModemError(
            .protocol, kind, operation: operation, reason: "\(reason) (ModemManager: \(status))", hint: hint,
            status: status)
    }

    /// `GDBus.Error:NAME: TEXT` → (NAME, TEXT).
    static func remoteError(_ message: String) -> (name: String, text: String)? {
        let marker = "GDBus.Error:"
        guard message.hasPrefix(marker) else { return nil }
        let rest = message.dropFirst(marker.count)
        guard let colon = rest.firstIndex(of: ":") else { return (String(rest), "") }
        return (String(rest[..<colon]), rest[rest.index(after: colon)...].drop { $0 == " " }.description)
    }

    /// The kind, the reason and a hint for a ModemManager error (`Core.WrongState`), with
    /// ModemManager's own text where cellpath has none better.
    static func describe(_ status: String, _ text: String) -> (FailureKind, String, String?) {
        let refused = "the network refused it"
        switch status {
        case "MobileEquipment.MissingOrUnknownApn", "MobileEquipment.GprsMissingOrUnknownApn":
            return (
                .unavailable, "\(refused): missing or unknown APN (3GPP cause 27)",
                "check the APN (--apn): the network does not know it"
            )
        case "MobileEquipment.UserAuthenticationFailed", "MobileEquipment.GprsUserAuthenticationFailed",
            "MobileEquipment.ServiceOptionNotSubscribed", "MobileEquipment.GprsServiceOptionNotSubscribed":
            return (
                .unavailable, "\(refused): \(text.isEmpty ? status : text)",
                "the subscription does not allow this APN, or its user name and password (--user, --password-file) are wrong"
            )
        case "MobileEquipment.Ipv4OnlyAllowed", "MobileEquipment.Ipv6OnlyAllowed":
            return (
                .unavailable,
                "\(refused): the APN offers \(status.hasSuffix("Ipv4OnlyAllowed") ? "IPv4" : "IPv6") only",
                "the network does not offer this address family on the APN (--ip-type)"
            )
        case "MobileEquipment.SimNotInserted":
            return (.unavailable, "the modem has no SIM", "insert a SIM (and restart the modem if it needs it)")
        case "MobileEquipment.SimPin", "MobileEquipment.SimPin2":
            return (.permission, "the SIM is locked by its PIN", "give the PIN in a file: --pin-file FILE")
        case "MobileEquipment.SimPuk", "MobileEquipment.SimPuk2":
            return (
                .permission, "the SIM is blocked: it asks for its PUK",
                "unblock it with the PUK from the operator (mmcli --puk), then retry"
            )
        case "MobileEquipment.IncorrectPassword":
            return (.permission, "the SIM refused the PIN", "check the PIN in the --pin-file")
        case "Core.Unauthorized":
            return (
                .permission, "ModemManager refused the request (not authorized)",
                "run as root, or allow it in ModemManager's polkit policy"
            )
        case "Core.WrongState":
            return (
                .temporary, "the modem is not in a state that allows it (\(text))",
                "the modem may still be enabling, registering or connecting: retry in a moment (mmcli -m N shows its state)"
            )
        case "Core.InProgress", "Core.Retry":
            return (.temporary, "ModemManager is busy with the modem (\(text))", "retry in a moment")
        case "Core.Cancelled", "Core.Aborted":
            return (.cancelled, "cancelled (\(text))", nil)
        case "MobileEquipment.NetworkTimeout", "Core.Timeout":
            return (.temporary, "no answer in time (\(text))", "retry, or allow more time with --timeout")
        case "Core.Unsupported":
            return (.unavailable, "the modem does not support it (\(text))", nil)
        case _ where status.hasPrefix("MobileEquipment."):
            return (
                .unavailable, "the modem or the network refused it: \(text)",
                "retry later; if it persists, ask the operator about the SIM's data subscription"
            )
        default:
            return (.unavailable, text.isEmpty ? status : text, nil)
        }
    }
}
