import CNetlink
import CellpathCore
import Glibc
import SystemSupport

/// The IP configuration a connected bearer gives its interface.
public struct BearerAddressing: Sendable, Equatable, Codable {
    public var interface: String
    /// The bearer's IPv4 address (applied as /32: the far end is reached through the device).
    public var address: String
    public var mtu: Int?

    public init(interface: String, address: String, mtu: Int? = nil) {
        self.interface = interface
        self.address = address
        self.mtu = mtu
    }
}

/// What `InterfaceConfigurator.apply` changed, so that exactly that can be undone, also by
/// another process (it is stored under /run/cellpath/). What was there before is not recorded
/// as added, and so is left alone.
public struct AppliedAddressing: Sendable, Equatable, Codable {
    public var addressing: BearerAddressing
    /// The interface was down and was set up.
    public var broughtUp = false
    public var previousMTU: Int?
    public var addedAddress = false
    /// The routing table of the source-address rule, and the rule's priority.
    public var table: Int
    public var addedTableRoute = false
    public var addedRule = false
    /// The metric of the added default route in the main table, when one was added.
    public var addedMainRouteMetric: Int?
    /// `rp_filter` of the interface before it was set to loose (2), when it was changed.
    public var previousRPFilter: String?
}

/// Applies a bearer's addressing to its interface over rtnetlink (libnl-route), the way the
/// HTTP engine relies on (docs/fetch.md, Closing): link up (and MTU), the address /32, a default
/// route through the interface in the main table with a metric worse than every other default
/// route (unbound traffic keeps its route), a table with a default route through the interface
/// and the rule `from <address> lookup <table>` (so that even the kernel's own replies from the
/// bearer address leave through the bearer), and loose reverse-path filtering on the interface
/// (strict filtering drops the replies). Needs CAP_NET_ADMIN. Works in the network namespace of
/// the calling thread.
public struct InterfaceConfigurator: Sendable {
    /// The kernel's main routing table.
    static let mainTable = 254
    /// Tables and rule priorities are `base + ifindex`: one per interface, before `main` (32766).
    public static let tableBase = 16_000
    /// The metric of the added main-table default route is at least this.
    public static let minimumMetric = 1000

    public init() {}

    /// Applies `addressing`; on failure undoes what it changed and throws (77 without
    /// CAP_NET_ADMIN, 69 for a missing interface).
    public func apply(_ addressing: BearerAddressing) throws(CellpathError) -> AppliedAddressing {
        let index = Int32(if_nametoindex(addressing.interface))
        guard index > 0 else {
            throw CellpathError(.unavailable, "couldn't configure \(addressing.interface): no such interface")
        }
        guard Netlink.address("\(addressing.address)/32").map({ nl_addr_put($0); return true }) == true,
              !addressing.address.contains("/") else {
            throw CellpathError(.dataError, "couldn't configure \(addressing.interface): '\(addressing.address)' is not an IPv4 address")
        }
        let netlink = try Netlink()
        var applied = AppliedAddressing(addressing: addressing, table: Self.tableBase + Int(index))
        do throws(CellpathError) {
            try bringUp(netlink, index, addressing, &applied)
            applied.addedAddress = try add("the address \(addressing.address)/32",
                                           withAddress(addressing, index) { rtnl_addr_add(netlink.socket, $0, NLM_F_EXCL) })
            applied.addedTableRoute = try add("the default route of table \(applied.table)",
                                              withDefaultRoute(index, table: applied.table, metric: 0) { rtnl_route_add(netlink.socket, $0, NLM_F_EXCL) })
            applied.addedRule = try add("the rule from \(addressing.address) lookup \(applied.table)",
                                        withRule(addressing.address, table: applied.table) { rtnl_rule_add(netlink.socket, $0, NLM_F_EXCL) })
            let metric = max(Self.minimumMetric, (try defaultRouteMetrics(netlink, excluding: index).max() ?? 0) + 1)
            if try add("a default route through \(addressing.interface)",
                       withDefaultRoute(index, table: Self.mainTable, metric: metric) { rtnl_route_add(netlink.socket, $0, NLM_F_EXCL) }) {
                applied.addedMainRouteMetric = metric
            }
            try loosenReversePathFilter(addressing.interface, &applied)
        } catch {
            _ = undo(applied)
            throw error
        }
        return applied
    }

    /// Undoes `applied`, newest change first; returns what could not be undone (empty when all was).
    public func undo(_ applied: AppliedAddressing) -> [String] {
        var problems: [String] = []
        guard let netlink = try? Netlink() else { return ["couldn't open rtnetlink"] }
        let index = Int32(if_nametoindex(applied.addressing.interface))
        func remove(_ what: String, _ rc: Int32) {
            if rc < 0 && !Netlink.absent(rc) { problems.append("couldn't remove \(what): \(Netlink.describe(rc))") }
        }
        if let previous = applied.previousRPFilter {
            do {
                try FileSystem.overwrite(previous + "\n", at: Self.rpFilterPath(applied.addressing.interface))
            } catch {
                problems.append("couldn't restore rp_filter: \(error.reason)")
            }
        }
        guard index > 0 else { return problems }  // the interface is gone, and its addresses and routes with it
        if let metric = applied.addedMainRouteMetric {
            remove("the default route through \(applied.addressing.interface)",
                   withDefaultRoute(index, table: Self.mainTable, metric: metric) { rtnl_route_delete(netlink.socket, $0, 0) })
        }
        if applied.addedRule {
            remove("the rule from \(applied.addressing.address)",
                   withRule(applied.addressing.address, table: applied.table) { rtnl_rule_delete(netlink.socket, $0, 0) })
        }
        if applied.addedTableRoute {
            remove("the default route of table \(applied.table)",
                   withDefaultRoute(index, table: applied.table, metric: 0) { rtnl_route_delete(netlink.socket, $0, 0) })
        }
        if applied.addedAddress {
            remove("the address \(applied.addressing.address)",
                   withAddress(applied.addressing, index) { rtnl_addr_delete(netlink.socket, $0, 0) })
        }
        if applied.broughtUp || applied.previousMTU != nil {
            remove("the link settings of \(applied.addressing.interface)",
                   changeLink(netlink, index, up: applied.broughtUp ? false : nil, mtu: applied.previousMTU))
        }
        return problems
    }

    // MARK: Steps

    /// Runs an add operation: true when it added, false when the object was there already.
    private func add(_ what: String, _ rc: Int32) throws(CellpathError) -> Bool {
        if rc == 0 { return true }
        if Netlink.exists(rc) { return false }
        throw Self.failure("add \(what)", rc)
    }

    private func bringUp(_ netlink: Netlink, _ index: Int32, _ addressing: BearerAddressing,
                         _ applied: inout AppliedAddressing) throws(CellpathError) {
        var link: OpaquePointer?
        let rc = rtnl_link_get_kernel(netlink.socket, index, nil, &link)
        guard rc == 0, let link else { throw Self.failure("read \(addressing.interface)", rc) }
        defer { rtnl_link_put(link) }
        let isUp = rtnl_link_get_flags(link) & UInt32(IFF_UP) != 0
        let currentMTU = Int(rtnl_link_get_mtu(link))
        let newMTU = addressing.mtu.flatMap { $0 == currentMTU ? nil : $0 }
        guard !isUp || newMTU != nil else { return }
        let change = changeLink(netlink, index, up: isUp ? nil : true, mtu: newMTU)
        guard change == 0 else { throw Self.failure("set \(addressing.interface) up", change) }
        applied.broughtUp = !isUp
        if newMTU != nil { applied.previousMTU = currentMTU }
    }

    /// Sets the link up or down and its MTU (nil: unchanged); returns libnl's code.
    private func changeLink(_ netlink: Netlink, _ index: Int32, up: Bool?, mtu: Int?) -> Int32 {
        var current: OpaquePointer?
        let rc = rtnl_link_get_kernel(netlink.socket, index, nil, &current)
        guard rc == 0, let current else { return rc }
        defer { rtnl_link_put(current) }
        guard let change = rtnl_link_alloc() else { return -NLE_NOMEM }
        defer { rtnl_link_put(change) }
        if up == true { rtnl_link_set_flags(change, UInt32(IFF_UP)) }
        if up == false { rtnl_link_unset_flags(change, UInt32(IFF_UP)) }
        if let mtu { rtnl_link_set_mtu(change, UInt32(mtu)) }
        return rtnl_link_change(netlink.socket, current, change, 0)
    }

    private func loosenReversePathFilter(_ interface: String, _ applied: inout AppliedAddressing) throws(CellpathError) {
        let path = Self.rpFilterPath(interface)
        guard let current = FileSystem.readText(path)?.filter({ !$0.isWhitespace }), current == "1" else { return }
        do {
            try FileSystem.overwrite("2\n", at: path)
        } catch {
            throw CellpathError(error.code == EACCES || error.code == EPERM ? .permission : .unavailable,
                                "couldn't set loose reverse-path filtering on \(interface): \(error.reason)")
        }
        applied.previousRPFilter = current
    }

    static func rpFilterPath(_ interface: String) -> String { "/proc/sys/net/ipv4/conf/\(interface)/rp_filter" }

    /// Metrics of the IPv4 default routes of the main table, except through `excluded`.
    private func defaultRouteMetrics(_ netlink: Netlink, excluding excluded: Int32) throws(CellpathError) -> [Int] {
        var cache: OpaquePointer?
        let rc = rtnl_route_alloc_cache(netlink.socket, AF_INET, 0, &cache)
        guard rc == 0, let cache else { throw Self.failure("read the routes", rc) }
        defer { nl_cache_free(cache) }
        var metrics: [Int] = []
        var object = nl_cache_get_first(cache)
        while let current = object {
            let route = current
            if rtnl_route_get_table(route) == UInt32(Self.mainTable), let dst = rtnl_route_get_dst(route),
               nl_addr_get_prefixlen(dst) == 0,
               rtnl_route_get_nnexthops(route) == 0 || rtnl_route_nh_get_ifindex(rtnl_route_nexthop_n(route, 0)) != excluded {
                metrics.append(Int(rtnl_route_get_priority(route)))
            }
            object = nl_cache_get_next(current)
        }
        return metrics
    }

    // MARK: libnl objects

    // Each builds one object, runs `body` on it and returns libnl's code (negative on failure).

    private func withAddress(_ addressing: BearerAddressing, _ index: Int32, _ body: (OpaquePointer) -> Int32) -> Int32 {
        guard let address = rtnl_addr_alloc() else { return -NLE_NOMEM }
        defer { rtnl_addr_put(address) }
        guard let local = Netlink.address("\(addressing.address)/32") else { return -NLE_INVAL }
        defer { nl_addr_put(local) }
        rtnl_addr_set_ifindex(address, index)
        _ = rtnl_addr_set_local(address, local)
        return body(address)
    }

    private func withDefaultRoute(_ index: Int32, table: Int, metric: Int, _ body: (OpaquePointer) -> Int32) -> Int32 {
        guard let route = rtnl_route_alloc() else { return -NLE_NOMEM }
        defer { rtnl_route_put(route) }
        guard let hop = rtnl_route_nh_alloc() else { return -NLE_NOMEM }
        guard let any = Netlink.address("0.0.0.0/0") else { return -NLE_INVAL }
        defer { nl_addr_put(any) }
        _ = rtnl_route_set_family(route, UInt8(AF_INET))
        rtnl_route_set_table(route, UInt32(table))
        _ = rtnl_route_set_dst(route, any)
        rtnl_route_set_priority(route, UInt32(metric))
        rtnl_route_set_scope(route, UInt8(RT_SCOPE_LINK.rawValue))
        rtnl_route_set_protocol(route, UInt8(RTPROT_STATIC))
        rtnl_route_nh_set_ifindex(hop, index)
        rtnl_route_add_nexthop(route, hop)
        return body(route)
    }

    private func withRule(_ source: String, table: Int, _ body: (OpaquePointer) -> Int32) -> Int32 {
        guard let rule = rtnl_rule_alloc() else { return -NLE_NOMEM }
        defer { rtnl_rule_put(rule) }
        guard let from = Netlink.address("\(source)/32") else { return -NLE_INVAL }
        defer { nl_addr_put(from) }
        rtnl_rule_set_family(rule, AF_INET)
        _ = rtnl_rule_set_src(rule, from)
        rtnl_rule_set_table(rule, UInt32(table))
        rtnl_rule_set_prio(rule, UInt32(table))
        rtnl_rule_set_action(rule, UInt8(FR_ACT_TO_TBL))
        return body(rule)
    }

    /// The error for a failed netlink operation: 77 without CAP_NET_ADMIN, 69 otherwise.
    static func failure(_ operation: String, _ rc: Int32) -> CellpathError {
        if Netlink.denied(rc) {
            return CellpathError(.permission, "couldn't \(operation): \(Netlink.describe(rc))",
                                 hint: "configuring an interface needs CAP_NET_ADMIN: run it with sudo")
        }
        return CellpathError(.unavailable, "couldn't \(operation): \(Netlink.describe(rc))")
    }
}
