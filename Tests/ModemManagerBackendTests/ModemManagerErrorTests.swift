import CModemManager
import CellpathCore
import GLibRuntime
import Testing

@testable import ModemManagerBackend

/// ModemManager's D-Bus errors become the `ModemError`s of the direct backends' kinds (hence
/// exit codes), with their own messages; the access technology mask becomes one technology.
@Suite struct ModemManagerErrorTests {
    /// A GDBus error as libmm-glib's calls report it: `GDBus.Error:NAME: TEXT`.
    private func remote(_ name: String, _ text: String) -> GLibError {
        GLibError(domain: 1, code: 2, message: "GDBus.Error:\(name): \(text)")
    }

    @Test func aRefusedAPNIsTheNetworksRefusalOfTheDirectBackends() {
        let error = ModemManagerErrors.error(
            "connect the bearer of cdc-wdm0 through ModemManager",
            remote("org.freedesktop.ModemManager1.Error.MobileEquipment.MissingOrUnknownApn", "Missing or unknown APN"))
        #expect(error.layer == .protocol)
        #expect(error.kind == .unavailable)  // 69, as a refused MBIM/QMI connect
        #expect(error.status == "MobileEquipment.MissingOrUnknownApn")
        #expect(
            error.message == "couldn't connect the bearer of cdc-wdm0 through ModemManager: the network refused it: "
                + "missing or unknown APN (3GPP cause 27) (ModemManager: MobileEquipment.MissingOrUnknownApn)")
        #expect(error.hint == "check the APN (--apn): the network does not know it")
    }

    @Test(arguments: [
        (
            "MobileEquipment.Ipv4OnlyAllowed", FailureKind.unavailable,
            "the network refused it: the APN offers IPv4 only"
        ),
        (
            "MobileEquipment.ServiceOptionNotSubscribed", .unavailable,
            "the network refused it: Requested service option not subscribed"
        ),
        (
            "Core.WrongState", .temporary,
            "the modem is not in a state that allows it (Requested service option not subscribed)"
        ),
        ("Core.Unauthorized", .permission, "ModemManager refused the request (not authorized)"),
        ("MobileEquipment.IncorrectPassword", .permission, "the SIM refused the PIN"),
        ("MobileEquipment.SimPin", .permission, "the SIM is locked by its PIN"),
        ("Core.Cancelled", .cancelled, "cancelled (Requested service option not subscribed)"),
        ("MobileEquipment.NetworkTimeout", .temporary, "no answer in time (Requested service option not subscribed)"),
        (
            "MobileEquipment.PlmnNotAllowed", .unavailable,
            "the modem or the network refused it: Requested service option not subscribed"
        )
    ])
    func eachErrorHasTheDirectBackendsKind(status: String, kind: FailureKind, reason: String) {
        let error = ModemManagerErrors.error(
            "op", remote("org.freedesktop.ModemManager1.Error.\(status)", "Requested service option not subscribed"))
        #expect(error.kind == kind)
        #expect(error.status == status)
        #expect(error.reason == "\(reason) (ModemManager: \(status))")
    }

    @Test func busErrorsAreTransportErrors() {
        let denied = ModemManagerErrors.error(
            "op", remote("org.freedesktop.DBus.Error.AccessDenied", "Rejected send message"))
        #expect(denied.layer == .transport)
        #expect(denied.kind == .permission)
        #expect(denied.status == nil)
        let gone = ModemManagerErrors.error(
            "op", remote("org.freedesktop.DBus.Error.ServiceUnknown", "The name is not activatable"))
        #expect(gone.kind == .unavailable)
        #expect(gone.reason == "The name is not activatable (org.freedesktop.DBus.Error.ServiceUnknown)")
        let local = ModemManagerErrors.error(
            "op", GLibError(domain: 1, code: 2, message: "Could not connect: No such file or directory"))
        #expect(local.layer == .transport)
        #expect(local.reason == "Could not connect: No such file or directory")
    }

    @Test func theRemoteErrorNameIsSplitFromItsText() {
        #expect(ModemManagerErrors.remoteError("GDBus.Error:a.b.C: text: with colon")! == ("a.b.C", "text: with colon"))
        #expect(ModemManagerErrors.remoteError("plain message") == nil)
    }

    @Test func theMostCapableTechnologyIsShown() {
        let lteAndUMTS = MMModemAccessTechnology(
            rawValue: MM_MODEM_ACCESS_TECHNOLOGY_LTE.rawValue | MM_MODEM_ACCESS_TECHNOLOGY_UMTS.rawValue)
        #expect(ModemManagerModem.accessTechnology(lteAndUMTS) == .lte)
        #expect(ModemManagerModem.accessTechnology(MM_MODEM_ACCESS_TECHNOLOGY_HSDPA) == .hspa)
        #expect(ModemManagerModem.accessTechnology(MM_MODEM_ACCESS_TECHNOLOGY_UNKNOWN) == nil)
        #expect(ModemManagerModem.accessTechnology(MM_MODEM_ACCESS_TECHNOLOGY_POTS) == .other)
    }
}
