import SystemSupport

/// ModemManager's FCC-unlock list as its package ships it: one script (or a link to one) per
/// model that leaves the factory FCC-locked, named `vid:pid` (lower-case hex) or `vid` alone for
/// a whole vendor. An FCC-locked modem refuses to switch its radio on until the host runs its
/// maker's unlock procedure, once per power-up. `cellpath doctor`, `cellpath modems` and the
/// bearer's bring-up read the list here.
public struct FCCUnlockList: Sendable, Equatable {
    /// Where ModemManager keeps the scripts it ships (disabled).
    public static let available = "/usr/share/ModemManager/fcc-unlock.available.d"
    /// Where an administrator enables one of them.
    public static let enabled = "/etc/ModemManager/fcc-unlock.d"

    /// The directory of shipped scripts this list reads.
    public let directory: String

    public init(directory: String = Self.available) {
        self.directory = directory
    }

    /// The USB or PCI id of `modem` as the list names it (`1199:9079`), if it has one.
    public static func hardwareID(of modem: DiscoveredModem) -> String? {
        guard let vendor = modem.usbVendorID ?? modem.pciVendorID else { return nil }
        let product = modem.usbVendorID != nil ? modem.usbProductID : modem.pciDeviceID
        return "\(vendor.lowercased()):\((product ?? "").lowercased())"
    }

    /// The list's entry for `modem`: its `vid:pid`, else (`orVendor`) its `vid` alone; nil when
    /// not listed. A vendor's entry covers every model of that vendor, locked or not: it tells
    /// which script unlocks a modem that refused radio-on, not that a modem whose radio is off
    /// is locked.
    public func entry(for modem: DiscoveredModem, orVendor: Bool = true) -> String? {
        guard let id = Self.hardwareID(of: modem) else { return nil }
        let names = orVendor ? [id, String(id.prefix { $0 != ":" })] : [id]
        return names.first { FileSystem.exists("\(directory)/\($0)") }
    }

    /// What FCC-locked means, for people.
    public static let meaning =
        "a regulatory lock of laptop modules: the radio stays off until the host runs the maker's unlock procedure, "
        + "once per power-up"

    /// How to unlock a modem whose entry is `entry` (nil: not on this list): enable ModemManager's
    /// script for it and let ModemManager enable the modem once; for a modem of cellpath's
    /// simulator (`simulated`), `cellpath sim modem unlock-fcc` as well.
    public func remedy(entry: String?, hardwareID: String?, simulated: Bool) -> String {
        let host =
            if let entry {
                "enable ModemManager's unlock script for it: sudo ln -s \(directory)/\(entry) \(Self.enabled)/, "
                    + "then let ModemManager enable the modem once (sudo systemctl restart ModemManager; "
                    + "mmcli -m any --enable)"
            } else {
                "ModemManager here ships no unlock script for \(hardwareID ?? "this model") (\(directory)): "
                    + "run the maker's unlock tool, or a ModemManager release that ships one, once"
            }
        guard simulated else { return host }
        return host + "; in cellpath's simulated world: cellpath sim modem unlock-fcc --modem N "
            + "(N as cellpath sim status numbers the modems)"
    }
}
