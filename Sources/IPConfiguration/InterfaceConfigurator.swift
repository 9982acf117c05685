import CNetlink
import CellpathCore
import Glibc
import SystemSupport

/// The IP configuration a connected bearer gives its interface: an IPv4 address, an IPv6
/// address, or both (dual stack).
public struct BearerAddressing: Sendable, Equatable, Codable {
    public var interface: String
    /// The bearer's IPv4 address (applied as /32: the far end is reached through the device).
    public var address: String?
    /// The bearer's IPv6 address, prefix and gateway.
    public var ipv6: IPv6Addressing?
    public var mtu: Int?

    public init(interface: String, address: String?, ipv6: IPv6Addressing? = nil, mtu: Int? = nil) {
        self.interface = interface
        self.address = address
        self.ipv6 = ipv6
        self.mtu = mtu
    }
}

/// A bearer's IPv6 configuration as the modem reports it.
public struct IPv6Addressing: Sendable, Equatable, Codable {
    /// The bearer's IPv6 address (no prefix).
    public var address: String
    /// The on-link prefix length (64 on most networks; 128 when the modem gives none).
    public var prefixLength: Int
    /// The gateway; nil routes through the device alone (it is point-to-point).
    public var gateway: String?

    public init(address: String, prefixLength: Int = 64, gateway: String? = nil) {
        self.address = address
        self.prefixLength = prefixLength
        self.gateway = gateway
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
    /// The routing table of the source-address rules (both families), and the rules' priority.
    public var table: Int
    public var addedTableRoute = false
    public var addedRule = false
    /// The metric of the added IPv4 default route in the main table, when one was added.
    public var addedMainRouteMetric: Int?
    /// `rp_filter` of the interface before it was set to loose (2), when it was changed.
    public var previousRPFilter: String?
    /// The IPv6 counterparts: the address, the table's default route, the source rule and the
    /// main table's default route (its metric).
    public var addedIPv6Address = false
    public var addedIPv6TableRoute = false
    public var addedIPv6Rule = false
    public var addedIPv6MainRouteMetric: Int?
    /// `disable_ipv6` of the interface before IPv6 was enabled on it, when it was changed.
    public var previousDisableIPv6: String?

    public init(addressing: BearerAddressing, table: Int) {
        self.addressing = addressing
        self.table = table
    }

    enum CodingKeys: String, CodingKey {
        case addressing, broughtUp, previousMTU, addedAddress, table, addedTableRoute, addedRule, addedMainRouteMetric,
            previousRPFilter, addedIPv6Address, addedIPv6TableRoute, addedIPv6Rule, addedIPv6MainRouteMetric,
            previousDisableIPv6
    }

    /// Decodes records of earlier versions too (IPv4 only: the IPv6 fields are missing).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        addressing = try c.decode(BearerAddressing.self, forKey: .addressing)
        table = try c.decode(Int.self, forKey: .table)
        broughtUp = try c.decodeIfPresent(Bool.self, forKey: .broughtUp) ?? false
        previousMTU = try c.decodeIfPresent(Int.self, forKey: .previousMTU)
        addedAddress = try c.decodeIfPresent(Bool.self, forKey: .addedAddress) ?? false
        addedTableRoute = try c.decodeIfPresent(Bool.self, forKey: .addedTableRoute) ?? false
        addedRule = try c.decodeIfPresent(Bool.self, forKey: .addedRule) ?? false
        addedMainRouteMetric = try c.decodeIfPresent(Int.self, forKey: .addedMainRouteMetric)
        previousRPFilter = try c.decodeIfPresent(String.self, forKey: .previousRPFilter)
        addedIPv6Address = try c.decodeIfPresent(Bool.self, forKey: .addedIPv6Address) ?? false
        addedIPv6TableRoute = try c.decodeIfPresent(Bool.self, forKey: .addedIPv6TableRoute) ?? false
        addedIPv6Rule = try c.decodeIfPresent(Bool.self, forKey: .addedIPv6Rule) ?? false
        addedIPv6MainRouteMetric = try c.decodeIfPresent(Int.self, forKey: .addedIPv6MainRouteMetric)
        previousDisableIPv6 = try c.decodeIfPresent(String.self, forKey: .previousDisableIPv6)
    }
}

/// Applies a bearer's addressing to its interface over rtnetlink (libnl-route), the way the
/// HTTP engine relies on (docs/fetch.md, Closing): link up (and MTU); for IPv4 the address /32,
/// for IPv6 the address with its prefix (no duplicate address detection: a tentative address
/// cannot be bound); per family a default route through the interface in the main table with a
/// metric worse than every other default route of that family (unbound traffic keeps its
/// route), a table with a default route through the interface and the rule
/// `from <address> lookup <table>` (so that even the kernel's own replies from the bearer
/// address leave through the bearer), and loose reverse-path filtering on the interface (strict
/// filtering drops the replies; IPv6 has none, docs/operations.md). Needs CAP_NET_ADMIN. Works in
/// the network namespace of the calling thread.
public struct InterfaceConfigurator: Sendable {
    /// The kernel's main routing table.
    static let mainTable = 254
    /// Tables and rule priorities are `base + ifindex`: one per interface, before `main` (32766).
    public static let tableBase = 16_000
    /// The tables (and rule priorities) cellpath may use: above the base, before `main`'s rule.
    public static let tables = (tableBase + 1) ... 32765
    /// The metric of the added main-table default route is at least this.
    public static let minimumMetric = 1000

    /// Whether the kernel allows `name` for an interface (its `dev_valid_name`): 1 to 15 bytes,
    /// not `.` or `..`, without `/`, `:` or white space. Such a name is also safe in a path
    /// under /proc/sys.
    public static func isValidInterfaceName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return (1 ... 15).contains(bytes.count) && name != "." && name != ".."
            && !bytes.contains { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: ":") || $0 <= 0x20 || $0 == 0x7f }
    }

    public init() {}

    /// Applies `addressing`; on failure undoes what it changed and throws (77 without
    /// CAP_NET_ADMIN, 69 for a missing interface, 65 for an address that is not one).
    public func apply(_ addressing: BearerAddressing) throws(CellpathError) -> AppliedAddressing {
        guard Self.isValidInterfaceName(addressing.interface) else {
            throw CellpathError(
                .dataError,
                "couldn't configure the interface: '\(addressing.interface.prefix(32))' is not an interface name")
        }
        let index = Int32(if_nametoindex(addressing.interface))
        guard index > 0 else {
            throw CellpathError(.unavailable, "couldn't configure \(addressing.interface): no such interface")
        }
        let addressing = try Self.validated(addressing)
        let netlink = try Netlink()
        var applied = AppliedAddressing(addressing: addressing, table: Self.tableBase + Int(index))
        do throws(CellpathError) {
            try bringUp(netlink, index, addressing, &applied)
            /// Adds the address, the source table's default route, the rule and a main default
            /// route with a worse metric than any other of the family; says which it added.
            func addFamily(
                _ family: Family, _ address: String, prefixLength: Int, _ prefix: String
            )
                throws(CellpathError) -> (address: Bool, tableRoute: Bool, rule: Bool, mainRouteMetric: Int?)
            {
                let addedAddress = try add(
                    "the address \(address)/\(prefixLength)",
                    withAddress(family, index) { rtnl_addr_add(netlink.socket, $0, NLM_F_EXCL) })
                let tableRoute = try add(
                    "the \(prefix)default route of table \(applied.table)",
                    withDefaultRoute(family, index, table: applied.table, metric: 0) {
                        rtnl_route_add(netlink.socket, $0, NLM_F_EXCL)
                    })
                let rule = try add(
                    "the rule from \(address) lookup \(applied.table)",
                    withRule(family, table: applied.table) { rtnl_rule_add(netlink.socket, $0, NLM_F_EXCL) })
                let metric = max(
                    Self.minimumMetric, (try defaultRouteMetrics(netlink, family, excluding: index).max() ?? 0) + 1)
                let mainRoute = try add(
                    "a\(prefix.isEmpty ? "" : "n") \(prefix)default route through \(addressing.interface)",
                    withDefaultRoute(family, index, table: Self.mainTable, metric: metric) {
                        rtnl_route_add(netlink.socket, $0, NLM_F_EXCL)
                    })
                return (addedAddress, tableRoute, rule, mainRoute ? metric : nil)
            }
            if let address = addressing.address {
                (applied.addedAddress, applied.addedTableRoute, applied.addedRule, applied.addedMainRouteMetric) =
                    try addFamily(.ipv4(address), address, prefixLength: 32, "")
                try loosenReversePathFilter(addressing.interface, &applied)
            }
            if let ipv6 = addressing.ipv6 {
                try enableIPv6(addressing.interface, &applied)
                (
                    applied.addedIPv6Address, applied.addedIPv6TableRoute, applied.addedIPv6Rule,
                    applied.addedIPv6MainRouteMetric
                ) = try addFamily(.ipv6(ipv6), ipv6.address, prefixLength: ipv6.prefixLength, "IPv6 ")
            }
        } catch {
            _ = undo(applied)
            throw error
        }
        return applied
    }

    /// Undoes `applied`, newest change first; returns what could not be undone (empty when all was).
    /// A kernel setting is restored only while it still has the value cellpath gave it, and only
    /// on an interface that exists. The source rules go even when the interface is gone (a modem
    /// that reset or re-enumerated): the kernel removes its addresses and routes, not the rules.
    public func undo(_ applied: AppliedAddressing) -> [String] {
        var problems: [String] = []
        let interface = applied.addressing.interface
        guard Self.isValidInterfaceName(interface), Self.tables.contains(applied.table) else {
            return ["refusing to undo a configuration that is not cellpath's (interface or table out of range)"]
        }
        guard let netlink = try? Netlink() else { return ["couldn't open rtnetlink"] }
        let index = Int32(if_nametoindex(interface))
        func remove(_ what: String, _ rc: Int32) {
            if rc < 0 && !Netlink.absent(rc) { problems.append("couldn't remove \(what): \(Netlink.describe(rc))") }
        }
        func restore(_ previous: String?, _ path: String, _ what: String, ifStill set: String) {
            guard let previous, index > 0,
                FileSystem.readText(path)?.filter({ !$0.isWhitespace }) == set
            else { return }
            do {
                try FileSystem.overwrite(previous + "\n", at: path)
            } catch {
                problems.append("couldn't restore \(what): \(error.reason)")
            }
        }
        /// Removes what was added for one family, in the reverse order of adding it; of an
        /// interface that is gone only the rule.
        func undo(
            _ family: Family, _ address: String, _ prefix: String,
            mainRouteMetric: Int?, rule: Bool, tableRoute: Bool, addedAddress: Bool
        ) {
            if index <= 0 {
                if rule {
                    remove(
                        "the rule from \(address)",
                        withRule(family, table: applied.table) { rtnl_rule_delete(netlink.socket, $0, 0) })
                }
                return
            }
            if let metric = mainRouteMetric {
                remove(
                    "the \(prefix)default route through \(interface)",
                    withDefaultRoute(family, index, table: Self.mainTable, metric: metric) {
                        rtnl_route_delete(netlink.socket, $0, 0)
                    })
            }
            if rule {
                remove(
                    "the rule from \(address)",
                    withRule(family, table: applied.table) { rtnl_rule_delete(netlink.socket, $0, 0) })
            }
            if tableRoute {
                remove(
                    "the \(prefix)default route of table \(applied.table)",
                    withDefaultRoute(family, index, table: applied.table, metric: 0) {
                        rtnl_route_delete(netlink.socket, $0, 0)
                    })
            }
            if addedAddress {
                remove("the address \(address)", withAddress(family, index) { rtnl_addr_delete(netlink.socket, $0, 0) })
            }
        }
        if let ipv6 = applied.addressing.ipv6 {
            undo(
                .ipv6(ipv6), ipv6.address, "IPv6 ", mainRouteMetric: applied.addedIPv6MainRouteMetric,
                rule: applied.addedIPv6Rule,
                tableRoute: applied.addedIPv6TableRoute, addedAddress: applied.addedIPv6Address)
        }
        restore(applied.previousDisableIPv6, Self.disableIPv6Path(interface), "disable_ipv6", ifStill: "0")
        restore(applied.previousRPFilter, Self.rpFilterPath(interface), "rp_filter", ifStill: "2")
        if let address = applied.addressing.address {
            undo(
                .ipv4(address), address, "", mainRouteMetric: applied.addedMainRouteMetric, rule: applied.addedRule,
                tableRoute: applied.addedTableRoute, addedAddress: applied.addedAddress)
        }
        guard index > 0 else { return problems }  // the interface is gone, and its addresses and routes with it
        if applied.broughtUp || applied.previousMTU != nil {
            remove(
                "the link settings of \(interface)",
                changeLink(netlink, index, up: applied.broughtUp ? false : nil, mtu: applied.previousMTU))
        }
        return problems
    }

    /// `addressing` with its addresses in canonical text (as the kernel lists them); throws
    /// `dataError` for one that is not an address of its family, or no address at all.
    static func validated(_ addressing: BearerAddressing) throws(CellpathError) -> BearerAddressing {
        var checked = addressing
        func bad(_ text: String, _ family: String) -> CellpathError {
            CellpathError(
                .dataError, "couldn't configure \(addressing.interface): '\(text)' is not an \(family) address")
        }
        if let address = addressing.address {
            guard let canonical = Family.canonical(address, AF_INET) else { throw bad(address, "IPv4") }
            checked.address = canonical
        }
        if let ipv6 = addressing.ipv6 {
            guard let canonical = Family.canonical(ipv6.address, AF_INET6) else { throw bad(ipv6.address, "IPv6") }
            guard (1 ... 128).contains(ipv6.prefixLength) else {
                throw CellpathError(
                    .dataError,
                    "couldn't configure \(addressing.interface): IPv6 prefix length \(ipv6.prefixLength) is out of range"
                )
            }
            checked.ipv6?.address = canonical
            if let gateway = ipv6.gateway {
                guard let gatewayText = Family.canonical(gateway, AF_INET6) else { throw bad(gateway, "IPv6") }
                checked.ipv6?.gateway = gatewayText
            }
        }
        guard checked.address != nil || checked.ipv6 != nil else {
            throw CellpathError(.dataError, "couldn't configure \(addressing.interface): the bearer has no address")
        }
        return checked
    }

    // MARK: Steps

    /// Runs an add operation: true when it added, false when the object was there already.
    private func add(_ what: String, _ rc: Int32) throws(CellpathError) -> Bool {
        if rc == 0 { return true }
        if Netlink.exists(rc) { return false }
        throw Self.failure("add \(what)", rc)
    }

    private func bringUp(
        _ netlink: Netlink, _ index: Int32, _ addressing: BearerAddressing,
        _ applied: inout AppliedAddressing
    ) throws(CellpathError) {
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
    func changeLink(_ netlink: Netlink, _ index: Int32, up: Bool?, mtu: Int?) -> Int32 {
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

    private func loosenReversePathFilter(_ interface: String, _ applied: inout AppliedAddressing) throws(CellpathError)
    {
        let path = Self.rpFilterPath(interface)
        guard let current = FileSystem.readText(path)?.filter({ !$0.isWhitespace }), current == "1" else { return }
        do {
            try FileSystem.overwrite("2\n", at: path)
        } catch {
            throw CellpathError(
                error.code == EACCES || error.code == EPERM ? .permission : .unavailable,
                "couldn't set loose reverse-path filtering on \(interface): \(error.reason)")
        }
        applied.previousRPFilter = current
    }

    static func rpFilterPath(_ interface: String) -> String { "/proc/sys/net/ipv4/conf/\(interface)/rp_filter" }

    /// The bearer's IPv6 needs IPv6 on the interface: enables it when `disable_ipv6` is set.
    private func enableIPv6(_ interface: String, _ applied: inout AppliedAddressing) throws(CellpathError) {
        let path = Self.disableIPv6Path(interface)
        guard let current = FileSystem.readText(path)?.filter({ !$0.isWhitespace }), current != "0" else { return }
        do {
            try FileSystem.overwrite("0\n", at: path)
        } catch {
            throw CellpathError(
                error.code == EACCES || error.code == EPERM ? .permission : .unavailable,
                "couldn't enable IPv6 on \(interface): \(error.reason)")
        }
        applied.previousDisableIPv6 = current
    }

    static func disableIPv6Path(_ interface: String) -> String { "/proc/sys/net/ipv6/conf/\(interface)/disable_ipv6" }

    /// Metrics of the default routes of `family` in the main table, except through `excluded`.
    private func defaultRouteMetrics(
        _ netlink: Netlink, _ family: Family, excluding excluded: Int32
    ) throws(CellpathError) -> [Int] {
        var cache: OpaquePointer?
        let rc = rtnl_route_alloc_cache(netlink.socket, family.af, 0, &cache)
        guard rc == 0, let cache else { throw Self.failure("read the routes", rc) }
        defer { nl_cache_free(cache) }
        var metrics: [Int] = []
        var object = nl_cache_get_first(cache)
        while let current = object {
            let route = current
            if rtnl_route_get_table(route) == UInt32(Self.mainTable), let dst = rtnl_route_get_dst(route),
                nl_addr_get_prefixlen(dst) == 0,
                rtnl_route_get_nnexthops(route) == 0
                    || rtnl_route_nh_get_ifindex(rtnl_route_nexthop_n(route, 0)) != excluded
            {
                metrics.append(Int(rtnl_route_get_priority(route)))
            }
            object = nl_cache_get_next(current)
        }
        return metrics
    }

    // MARK: libnl objects

    /// One family's part of the addressing, as libnl objects take it.
    enum Family {
        case ipv4(String)
        case ipv6(IPv6Addressing)

        var af: Int32 {
            if case .ipv4 = self { return AF_INET }
            return AF_INET6
        }
        var address: String {
            switch self {
            case .ipv4(let address): address
            case .ipv6(let ipv6): ipv6.address
            }
        }
        /// The address with the prefix length the interface gets.
        var local: String {
            switch self {
            case .ipv4(let address): "\(address)/32"
            case .ipv6(let ipv6): "\(ipv6.address)/\(ipv6.prefixLength)"
            }
        }
        var host: String { "\(address)/\(af == AF_INET ? 32 : 128)" }
        var any: String { af == AF_INET ? "0.0.0.0/0" : "::/0" }
        var gateway: String? {
            if case .ipv6(let ipv6) = self { return ipv6.gateway }
            return nil
        }

        /// `text` as the C library prints it, nil when it is not an address of family `af`.
        static func canonical(_ text: String, _ af: Int32) -> String? {
            var bytes = [UInt8](repeating: 0, count: 16)
            guard !text.contains("/"), inet_pton(af, text, &bytes) == 1 else { return nil }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            guard inet_ntop(af, bytes, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    // Each builds one object, runs `body` on it and returns libnl's code (negative on failure).

    func withAddress(_ family: Family, _ index: Int32, _ body: (OpaquePointer) -> Int32) -> Int32 {
        guard let address = rtnl_addr_alloc() else { return -NLE_NOMEM }
        defer { rtnl_addr_put(address) }
        guard let local = Netlink.address(family.local, family.af) else { return -NLE_INVAL }
        defer { nl_addr_put(local) }
        rtnl_addr_set_ifindex(address, index)
        _ = rtnl_addr_set_local(address, local)
        if family.af == AF_INET6 { rtnl_addr_set_flags(address, UInt32(IFA_F_NODAD)) }
        return body(address)
    }

    private func withDefaultRoute(
        _ family: Family, _ index: Int32, table: Int, metric: Int, _ body: (OpaquePointer) -> Int32
    ) -> Int32 {
        guard let route = rtnl_route_alloc() else { return -NLE_NOMEM }
        defer { rtnl_route_put(route) }
        guard let hop = rtnl_route_nh_alloc() else { return -NLE_NOMEM }
        guard let any = Netlink.address(family.any, family.af) else { rtnl_route_nh_free(hop); return -NLE_INVAL }
        defer { nl_addr_put(any) }
        _ = rtnl_route_set_family(route, UInt8(family.af))
        rtnl_route_set_table(route, UInt32(table))
        _ = rtnl_route_set_dst(route, any)
        rtnl_route_set_priority(route, UInt32(metric))
        rtnl_route_set_protocol(route, UInt8(RTPROT_STATIC))
        rtnl_route_nh_set_ifindex(hop, index)
        if let text = family.gateway {
            guard let gateway = Netlink.address(text, family.af) else { rtnl_route_nh_free(hop); return -NLE_INVAL }
            rtnl_route_nh_set_gateway(hop, gateway)
            nl_addr_put(gateway)
            // The gateway is reached through the point-to-point device, also outside the prefix.
            rtnl_route_nh_set_flags(hop, UInt32(RTNH_F_ONLINK))
            rtnl_route_set_scope(route, UInt8(RT_SCOPE_UNIVERSE.rawValue))
        } else {
            rtnl_route_set_scope(
                route, UInt8(family.af == AF_INET ? RT_SCOPE_LINK.rawValue : RT_SCOPE_UNIVERSE.rawValue))
        }
        rtnl_route_add_nexthop(route, hop)
        return body(route)
    }

    private func withRule(_ family: Family, table: Int, _ body: (OpaquePointer) -> Int32) -> Int32 {
        guard let rule = rtnl_rule_alloc() else { return -NLE_NOMEM }
        defer { rtnl_rule_put(rule) }
        guard let from = Netlink.address(family.host, family.af) else { return -NLE_INVAL }
        defer { nl_addr_put(from) }
        rtnl_rule_set_family(rule, family.af)
        _ = rtnl_rule_set_src(rule, from)
        rtnl_rule_set_table(rule, UInt32(table))
        rtnl_rule_set_prio(rule, UInt32(table))
        rtnl_rule_set_action(rule, UInt8(FR_ACT_TO_TBL))
        return body(rule)
    }

    /// The error for a failed netlink operation: 77 without CAP_NET_ADMIN, 69 otherwise.
    static func failure(_ operation: String, _ rc: Int32) -> CellpathError {
        if Netlink.denied(rc) {
            return CellpathError(
                .permission, "couldn't \(operation): \(Netlink.describe(rc))",
                hint: "configuring an interface needs CAP_NET_ADMIN: run it with sudo")
        }
        return CellpathError(.unavailable, "couldn't \(operation): \(Netlink.describe(rc))")
    }
}
