import CNetlink
import CellpathCore
import Glibc

extension InterfaceConfigurator {
    /// Removes from `interface` everything of the shape cellpath gives a bearer's interface,
    /// without a record of what was added (`bearer down --force` after a record was lost): the
    /// source rules of its table (`tableBase` + its index, both families), the routes of that
    /// table, the static default routes through it in the main table with cellpath's metrics,
    /// and its addresses of a bearer's shape (IPv4 /32, IPv6 without duplicate address
    /// detection). Only for a modem's own interface, whose bearer is down. Returns what it
    /// removed, and what it could not.
    public func removeLeftovers(on interface: String) -> (removed: [String], problems: [String]) {
        guard Self.isValidInterfaceName(interface) else {
            return ([], ["'\(interface.prefix(32))' is not an interface name"])
        }
        let index = Int32(if_nametoindex(interface))
        guard index > 0 else { return ([], []) }  // gone, and its addresses and routes with it
        guard let netlink = try? Netlink() else { return ([], ["couldn't open rtnetlink"]) }
        let table = UInt32(Self.tableBase) + UInt32(index)
        var removed: [String] = [], problems: [String] = []
        func remove(_ what: String, _ rc: Int32) {
            if rc >= 0 {
                removed.append(what)
            } else if !Netlink.absent(rc) {
                problems.append("couldn't remove \(what): \(Netlink.describe(rc))")
            }
        }
        /// Each object of a fresh cache of `allocate`'s kind.
        func each(_ allocate: (inout OpaquePointer?) -> Int32, _ body: (OpaquePointer) -> Void) {
            var cache: OpaquePointer?
            let rc = allocate(&cache)
            guard rc == 0, let cache else {
                problems.append("couldn't read the kernel's tables: \(Netlink.describe(rc))"); return
            }
            defer { nl_cache_free(cache) }
            var object = nl_cache_get_first(cache)
            while let current = object {
                body(current)
                object = nl_cache_get_next(current)
            }
        }
        each({ rtnl_rule_alloc_cache(netlink.socket, AF_UNSPEC, &$0) }) { rule in
            if rtnl_rule_get_table(rule) == table && rtnl_rule_get_prio(rule) == table {
                remove("the rule of table \(table)", rtnl_rule_delete(netlink.socket, rule, 0))
            }
        }
        for family in [AF_INET, AF_INET6] {
            each({ rtnl_route_alloc_cache(netlink.socket, family, 0, &$0) }) { route in
                let throughInterface =
                    rtnl_route_get_nnexthops(route) == 1
                    && rtnl_route_nh_get_ifindex(rtnl_route_nexthop_n(route, 0)) == index
                guard throughInterface else { return }
                let isDefault = rtnl_route_get_dst(route).map { nl_addr_get_prefixlen($0) == 0 } ?? false
                if rtnl_route_get_table(route) == table {
                    remove("a route of table \(table)", rtnl_route_delete(netlink.socket, route, 0))
                } else if rtnl_route_get_table(route) == UInt32(Self.mainTable), isDefault,
                    rtnl_route_get_protocol(route) == UInt8(RTPROT_STATIC),
                    rtnl_route_get_priority(route) >= UInt32(Self.minimumMetric)
                {
                    remove("the default route through \(interface)", rtnl_route_delete(netlink.socket, route, 0))
                }
            }
        }
        each({ rtnl_addr_alloc_cache(netlink.socket, &$0) }) { address in
            guard rtnl_addr_get_ifindex(address) == index else { return }
            let family = rtnl_addr_get_family(address)
            let bearerShaped =
                family == AF_INET
                ? rtnl_addr_get_prefixlen(address) == 32
                : family == AF_INET6 && rtnl_addr_get_flags(address) & UInt32(IFA_F_NODAD) != 0
                    && rtnl_addr_get_scope(address) == Int32(RT_SCOPE_UNIVERSE.rawValue)
            if bearerShaped { remove("an address of \(interface)", rtnl_addr_delete(netlink.socket, address, 0)) }
        }
        return (removed, problems)
    }
}
