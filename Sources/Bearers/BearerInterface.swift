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
}
