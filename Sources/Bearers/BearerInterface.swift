import CellpathCore
import IPConfiguration
import ModemDiscovery

/// Which of a modem's net devices carries its connected bearer.
public enum BearerInterface {
    /// The interface the record names; else, for a process that cannot read the record (root's,
    /// from an unprivileged one), the modem's net device or data link that holds one of the
    /// bearer's addresses: a QMAP bearer's mux device (`qmimux0`), never its master. Nil when
    /// none holds one.
    public static func carrying(
        _ bearer: BearerStatus, of modem: DiscoveredModem, record: BearerRecord?
    ) -> String? {
        if let record { return record.interface }
        let addresses = [bearer.ipv4Address, bearer.ipv6Address].compactMap { $0 }
        return (modem.interfaces + modem.links).first { name in
            addresses.contains { InterfaceState.holds($0, on: name) }
        }
    }

    /// The net device ModemManager says the bearer carries data on (its bearer's `Interface`),
    /// taken as the interface to configure when it is one of `modem`'s net devices or a data
    /// link stacked on them (`qmimux0`, `rmnet_data0`, `wwan0.1`). The modem is read again from
    /// sysfs under `roots`: ModemManager made the link after discovery. Refuses (unavailable)
    /// any other name.
    public static func named(
        _ name: String, of modem: DiscoveredModem, roots: DeviceRoots
    ) throws(CellpathError) -> String {
        if modem.interfaces.contains(name) { return name }
        let current = ModemDiscovery(roots: roots).current(modem) ?? modem
        if InterfaceConfigurator.isValidInterfaceName(name),
            current.interfaces.contains(name) || current.links.contains(name)
        {
            return name
        }
        let own = (current.interfaces + current.links).joined(separator: ", ")
        throw CellpathError(
            .unavailable,
            "ModemManager says modem \(modem.index)'s bearer carries data on \(name.debugDescription), which is neither one of its net devices nor stacked on them (\(own.isEmpty ? "it has none" : own))",
            hint: "cellpath configures only the modem's own devices: see the bearer's interface with mmcli -b"
        )
    }
}
