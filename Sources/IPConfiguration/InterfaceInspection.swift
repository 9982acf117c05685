import CNetlink
import CellpathCore
import Glibc
import SystemSupport

/// What the kernel holds of a bearer's interface configuration, read without changing anything
/// (`cellpath doctor`): its addresses, the source rules and routes of its table (the shape
/// `InterfaceConfigurator.apply` gives), the default routes through it, and its rp_filter and
/// disable_ipv6 settings. Needs no privilege; the network namespace of the calling thread.
public struct InterfaceInspection: Sendable {
    /// One address of the interface.
    public struct Address: Sendable, Equatable {
        public var address: String
        public var prefixLength: Int
        /// Global scope (RT_SCOPE_UNIVERSE): neither link-local nor host.
        public var isGlobal: Bool
    }

    public var interface: String
    public var exists: Bool
    public var isUp: Bool
    public var addresses: [Address] = []
    /// cellpath's table for this interface (`tableBase` + its index).
    public var table: Int
    /// The source addresses of the rules that look up `table` (`from <address> lookup <table>`).
    public var ruleSources: [String] = []
    /// Whether `table` has a default route through the interface, per family.
    public var tableDefaultRoute = (ipv4: false, ipv6: false)
    /// The metrics of the main table's default routes through the interface, per family.
    public var mainDefaultRouteMetrics: (ipv4: [Int], ipv6: [Int]) = ([], [])
    /// `rp_filter` of the interface and of `all` (the kernel applies the larger), nil when unreadable.
    public var rpFilter: Int?
    public var rpFilterAll: Int?
    public var disableIPv6: Int?

    /// The reverse-path filtering the kernel applies to the interface: the larger of its own and `all`'s.
    public var effectiveRPFilter: Int? {
        guard let rpFilter else { return nil }
        return max(rpFilter, rpFilterAll ?? 0)
    }

    /// Reads `interface`'s state; a missing interface is `exists == false` and nothing else.
    public static func read(_ interface: String) throws(CellpathError) -> InterfaceInspection {
        guard InterfaceConfigurator.isValidInterfaceName(interface) else {
            throw CellpathError(.dataError, "'\(interface.prefix(32))' is not an interface name")
        }
        let index = Int32(if_nametoindex(interface))
        var inspection = InterfaceInspection(
            interface: interface, exists: index > 0, isUp: false,
            table: InterfaceConfigurator.tableBase + Int(index))
        guard index > 0 else { return inspection }
        inspection.isUp = InterfaceSnapshot.read(interface).isUp
        let netlink = try Netlink()
        let table = UInt32(inspection.table)
        try each({ rtnl_addr_alloc_cache(netlink.socket, &$0) }) { address in
            guard rtnl_addr_get_ifindex(address) == index, let local = rtnl_addr_get_local(address),
                let text = Self.text(local)
            else { return }
            let isGlobal = rtnl_addr_get_scope(address) == Int32(RT_SCOPE_UNIVERSE.rawValue)
            inspection.addresses.append(
                Address(
                    address: text, prefixLength: Int(rtnl_addr_get_prefixlen(address)),
                    isGlobal: isGlobal))
        }
        try each({ rtnl_rule_alloc_cache(netlink.socket, AF_UNSPEC, &$0) }) { rule in
            guard rtnl_rule_get_table(rule) == table, let source = rtnl_rule_get_src(rule),
                let text = Self.text(source)
            else { return }
            inspection.ruleSources.append(text)
        }
        for family in [AF_INET, AF_INET6] {
            try each({ rtnl_route_alloc_cache(netlink.socket, family, 0, &$0) }) { route in
                guard rtnl_route_get_nnexthops(route) == 1,
                    rtnl_route_nh_get_ifindex(rtnl_route_nexthop_n(route, 0)) == index,
                    rtnl_route_get_dst(route).map({ nl_addr_get_prefixlen($0) == 0 }) ?? true
                else { return }
                if rtnl_route_get_table(route) == table {
                    if family == AF_INET {
                        inspection.tableDefaultRoute.ipv4 = true
                    } else {
                        inspection.tableDefaultRoute.ipv6 = true
                    }
                } else if rtnl_route_get_table(route) == UInt32(InterfaceConfigurator.mainTable) {
                    let metric = Int(rtnl_route_get_priority(route))
                    if family == AF_INET {
                        inspection.mainDefaultRouteMetrics.ipv4.append(metric)
                    } else {
                        inspection.mainDefaultRouteMetrics.ipv6.append(metric)
                    }
                }
            }
        }
        inspection.rpFilter = Self.setting(InterfaceConfigurator.rpFilterPath(interface))
        inspection.rpFilterAll = Self.setting(InterfaceConfigurator.rpFilterPath("all"))
        inspection.disableIPv6 = Self.setting(InterfaceConfigurator.disableIPv6Path(interface))
        return inspection
    }

    /// Sets loose reverse-path filtering (2) on `interface` (doctor --fix, when the kernel applies strict): what
    /// `bearer up` sets. Returns the value it replaced, nil when nothing was changed.
    public static func loosenReversePathFilter(_ interface: String) throws(CellpathError) -> Int? {
        guard InterfaceConfigurator.isValidInterfaceName(interface) else {
            throw CellpathError(.dataError, "'\(interface.prefix(32))' is not an interface name")
        }
        let path = InterfaceConfigurator.rpFilterPath(interface)
        guard let current = setting(path), current != 2 else { return nil }
        do {
            try FileSystem.overwrite("2\n", at: path)
        } catch {
            throw CellpathError(
                error.code == EACCES || error.code == EPERM ? .permission : .unavailable,
                "couldn't set loose reverse-path filtering on \(interface): \(error.reason)")
        }
        return current
    }

    /// An integer kernel setting under /proc/sys, nil when unreadable.
    static func setting(_ path: String) -> Int? {
        FileSystem.readText(path).flatMap { Int($0.filter { !$0.isWhitespace }) }
    }

    /// The address without its prefix length, as the kernel prints it.
    private static func text(_ address: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        guard let printed = nl_addr2str(address, &buffer, buffer.count) else { return nil }
        let full = String(cString: printed)
        return String(full.prefix { $0 != "/" })
    }

    /// Calls `body` with each object of a fresh cache of `allocate`'s kind.
    private static func each(
        _ allocate: (inout OpaquePointer?) -> Int32, _ body: (OpaquePointer) -> Void
    )
        throws(CellpathError)
    {
        var cache: OpaquePointer?
        let rc = allocate(&cache)
        guard rc == 0, let cache else {
            throw CellpathError(.unavailable, "couldn't read the kernel's tables: \(Netlink.describe(rc))")
        }
        defer { nl_cache_free(cache) }
        var object = nl_cache_get_first(cache)
        while let current = object {
            body(current)
            object = nl_cache_get_next(current)
        }
    }
}
