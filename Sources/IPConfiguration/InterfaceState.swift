import CNetlink
import CellpathCore
import Glibc
import SystemSupport

/// What the kernel says about a bearer's interface: its addresses and its byte counters. Reads
/// need no privilege. Works in the network namespace of the calling thread.
public enum InterfaceState {
    /// Whether `interface` holds `address`, IPv4 or IPv6 in the kernel's text form (any prefix length).
    public static func holds(_ address: String, on interface: String) -> Bool {
        InterfaceSnapshot.read(interface).addresses.contains(address)
    }

    /// Bytes received and sent on `interface` since it was created; nil when it is missing.
    public static func byteCounters(_ interface: String) -> (received: UInt64, sent: UInt64)? {
        guard let netlink = try? Netlink() else { return nil }
        var link: OpaquePointer?
        guard rtnl_link_get_kernel(netlink.socket, 0, interface, &link) == 0, let link else { return nil }
        defer { rtnl_link_put(link) }
        return (rtnl_link_get_stat(link, RTNL_LINK_RX_BYTES), rtnl_link_get_stat(link, RTNL_LINK_TX_BYTES))
    }

    /// Whether `interface` is administratively up; nil when it is missing.
    public static func isUp(_ interface: String) -> Bool? {
        guard let netlink = try? Netlink() else { return nil }
        var link: OpaquePointer?
        guard rtnl_link_get_kernel(netlink.socket, 0, interface, &link) == 0, let link else { return nil }
        defer { rtnl_link_put(link) }
        return rtnl_link_get_flags(link) & UInt32(IFF_UP) != 0
    }

    /// Sets `interface` up or down (`ip link set … up|down`).
    public static func setLink(_ interface: String, up: Bool) throws(CellpathError) {
        let netlink = try Netlink()
        var current: OpaquePointer?
        var rc = rtnl_link_get_kernel(netlink.socket, 0, interface, &current)
        if rc == 0, let current {
            defer { rtnl_link_put(current) }
            guard let change = rtnl_link_alloc() else { throw CellpathError(.internalError, "out of memory") }
            defer { rtnl_link_put(change) }
            if up { rtnl_link_set_flags(change, UInt32(IFF_UP)) } else { rtnl_link_unset_flags(change, UInt32(IFF_UP)) }
            rc = rtnl_link_change(netlink.socket, current, change, 0)
        }
        guard rc != 0 else { return }
        throw CellpathError(
            Netlink.denied(rc) ? .permission : .unavailable,
            "couldn't set \(interface) \(up ? "up" : "down"): \(Netlink.describe(rc))")
    }
}
