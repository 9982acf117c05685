import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport

/// Creates and deletes the namespaces, links, addresses and routes of a world with iproute2's
/// `ip` (docs/simulator.md "Topology"). TUN devices are created by the data path, which owns
/// them (`DataPlane`); `configureLinks` runs after they exist. Blocking; any plain thread.
struct WorldBuilder {
    var topology: WorldTopology
    /// Which modems' networks offer IPv6 and whether the carrier is a NAT64 one.
    var scenario: Scenario

    /// IPv6 on every link created from now on, without the kernel's own chatter: no link-local
    /// address, duplicate address detection, router solicitation or autoconfiguration, so that
    /// no packet leaves a link (wlan0 above all) unless a program sends it. (TUN links are
    /// NOARP: the kernel joins no solicited-node group on them, hence sends no MLD report.)
    static let quietIPv6: [String: String] = [
        "net/ipv6/conf/default/accept_ra": "0", "net/ipv6/conf/default/autoconf": "0",
        "net/ipv6/conf/default/addr_gen_mode": "1", "net/ipv6/conf/default/accept_dad": "0",
        "net/ipv6/conf/default/dad_transmits": "0", "net/ipv6/conf/default/router_solicitations": "0"
    ]

    /// Creates the three namespaces with loopback up and their sysctls (forwarding of both
    /// families in the carrier, loose reverse-path filtering everywhere, quiet IPv6).
    func createNamespaces() throws {
        for ns in topology.namespaces {
            try Subprocess.check(["ip", "netns", "add", ns])
            try Subprocess.check(["ip", "-n", ns, "link", "set", "lo", "up"])
        }
        for ns in topology.namespaces {
            var settings = ["net/ipv4/conf/all/rp_filter": "2", "net/ipv4/conf/default/rp_filter": "2"].merging(
                Self.quietIPv6
            ) { $1 }
            if ns == topology.carrierNamespace {
                settings["net/ipv4/ip_forward"] = "1"
                try sysctl(ns, ["net/ipv6/conf/all/forwarding": "1"])
                // Forwarding stays on (it is the "all" value that routes); links made later are
                // hosts, which keeps them out of the all-routers groups and their MLD reports.
                settings["net/ipv6/conf/default/forwarding"] = "0"
            }
            try sysctl(ns, settings)
        }
        try writeResolvConf()
    }

    /// Adds the veth, addresses and routes of both families once the TUN devices exist
    /// (docs/simulator.md "Addresses and routes").
    func configureLinks() throws {
        let ue = topology.ueNamespace, carrier = topology.carrierNamespace, inet = topology.inetNamespace
        typealias T = WorldTopology
        // IPv6 only on the radio links of modems whose network offers it.
        var ueSettings: [String: String] = [:], carrierSettings: [String: String] = [:]
        let routers = RouterModem.indexes(scenario)
        for n in 0 ..< topology.modemCount where !offersIPv6(n) && !routers.contains(n) {
            ueSettings["net/ipv6/conf/\(topology.modemInterface(n))/disable_ipv6"] = "1"
            carrierSettings["net/ipv6/conf/\(topology.radioInterface(n))/disable_ipv6"] = "1"
        }
        if !ueSettings.isEmpty {
            try sysctl(ue, ueSettings)
            try sysctl(carrier, carrierSettings)
        }
        // Wi-Fi: wlan0 (device) ↔ wifi0 (access point in the internet namespace), both TUN.
        try ip(ue, "addr", "add", "\(T.wlanAddress)/24", "dev", T.wlanInterface)
        try ip(ue, "addr", "add", "\(T.wlanIPv6Address)/64", "dev", T.wlanInterface)
        try ip(ue, "link", "set", T.wlanInterface, "up")
        try ip(
            ue, "route", "add", "default", "via", T.wifiGateway, "dev", T.wlanInterface, "metric",
            "\(T.wlanRouteMetric)")
        try ip(
            ue, "-6", "route", "add", "default", "via", T.wifiGatewayIPv6, "dev", T.wlanInterface, "metric",
            "\(T.wlanRouteMetric)")
        try ip(inet, "addr", "add", "\(T.wifiGateway)/24", "dev", T.wifiPeerInterface)
        try ip(inet, "addr", "add", "\(T.wifiGatewayIPv6)/64", "dev", T.wifiPeerInterface)
        try ip(inet, "link", "set", T.wifiPeerInterface, "up")
        // Carrier ↔ internet veth. Its ends need link-local addresses: the kernel sends neighbour
        // solicitations for forwarded packets from the link-local address only.
        try ip(
            carrier, "link", "add", T.carrierVethInterface, "type", "veth", "peer", "name", T.inetVethInterface,
            "netns", inet)
        try ip(carrier, "link", "set", T.carrierVethInterface, "addrgenmode", "eui64")
        try ip(inet, "link", "set", T.inetVethInterface, "addrgenmode", "eui64")
        try ip(carrier, "addr", "add", "\(T.carrierVethAddress)/30", "dev", T.carrierVethInterface)
        try ip(carrier, "addr", "add", "\(T.carrierVethIPv6)/64", "dev", T.carrierVethInterface)
        try ip(carrier, "link", "set", T.carrierVethInterface, "up")
        try ip(inet, "addr", "add", "\(T.inetVethAddress)/30", "dev", T.inetVethInterface)
        try ip(inet, "addr", "add", "\(T.inetVethIPv6)/64", "dev", T.inetVethInterface)
        try ip(inet, "link", "set", T.inetVethInterface, "up")
        // Service addresses live on loopback (no dummy links in this kernel). Behind NAT64 the
        // API is an IPv4-only host.
        try ip(carrier, "addr", "add", "\(T.carrierEndpointAddress)/32", "dev", "lo")
        try ip(carrier, "addr", "add", "\(T.carrierDNSAddress)/32", "dev", "lo")
        try ip(carrier, "addr", "add", "\(T.carrierEndpointIPv6)/128", "dev", "lo")
        try ip(carrier, "addr", "add", "\(T.carrierDNSIPv6)/128", "dev", "lo")
        try ip(inet, "addr", "add", "\(T.apiAddress)/32", "dev", "lo")
        if !scenario.nat64 { try ip(inet, "addr", "add", "\(T.apiIPv6Address)/128", "dev", "lo") }
        // Routes: the carrier reaches the internet through the veth, the internet reaches
        // bearer addresses through the carrier.
        try ip(carrier, "route", "add", "192.0.2.0/24", "via", T.inetVethAddress, "dev", T.carrierVethInterface)
        try ip(carrier, "route", "add", "203.0.113.0/24", "via", T.inetVethAddress, "dev", T.carrierVethInterface)
        try ip(carrier, "-6", "route", "add", "2001:db8:2::/64", "via", T.inetVethIPv6, "dev", T.carrierVethInterface)
        try ip(carrier, "-6", "route", "add", "2001:db8:113::/64", "via", T.inetVethIPv6, "dev", T.carrierVethInterface)
        try ip(inet, "route", "add", T.bearerNetwork, "via", T.carrierVethAddress, "dev", T.inetVethInterface)
        try ip(inet, "-6", "route", "add", T.bearerIPv6Network, "via", T.carrierVethIPv6, "dev", T.inetVethInterface)
        // Radio links: each bearer address (and /64) is routed to its modem's TUN peer.
        for n in 0 ..< topology.modemCount {
            try ip(carrier, "link", "set", topology.radioInterface(n), "up")
            try ip(carrier, "route", "add", "\(topology.bearerAddress(n))/32", "dev", topology.radioInterface(n))
            if offersIPv6(n) {
                try ip(carrier, "-6", "route", "add", topology.bearerIPv6Prefix(n), "dev", topology.radioInterface(n))
            }
        }
    }

    /// Readies modem `n`'s net device re-created as `interface` after a re-enumeration: IPv6
    /// off unless its network offers it, as `configureLinks` does at bring-up.
    func prepareModemInterface(_ n: Int, interface: String) throws {
        if !offersIPv6(n) { try sysctl(topology.ueNamespace, ["net/ipv6/conf/\(interface)/disable_ipv6": "1"]) }
    }

    /// Routes the NAT64 prefix and tayga's IPv4 pool through tayga's TUN (created by
    /// `NAT64Carrier.prepare`); translated packets then take the carrier's own routes.
    func configureNAT64() throws {
        let carrier = topology.carrierNamespace
        typealias T = WorldTopology
        try ip(carrier, "link", "set", T.nat64Interface, "up")
        try ip(carrier, "route", "add", T.nat64Pool, "dev", T.nat64Interface)
        try ip(carrier, "-6", "route", "add", T.nat64Prefix, "dev", T.nat64Interface)
    }

    /// Whether modem `n`'s network offers IPv6.
    private func offersIPv6(_ n: Int) -> Bool {
        scenario.modems.indices.contains(n) && scenario.modems[n].ipType.carriesIPv6
    }

    /// Gives modem `n`'s wwan interface the addresses of `assignment` and default routes with a
    /// metric above Wi-Fi's, then sets it up: unbound traffic keeps using wlan0, sockets bound to
    /// the interface use it (what NetworkManager does for a WWAN connection). A source-address
    /// rule per family sends every packet from the bearer's addresses through the interface, the
    /// kernel's own replies (TCP resets) included, as a careful bearer set-up does.
    func configureBearer(_ n: Int, _ assignment: BearerAssignment, interface: String? = nil) throws {
        let ue = topology.ueNamespace, dev = interface ?? topology.modemInterface(n)
        let table = "\(topology.bearerRouteTable(n))", metric = "\(topology.bearerRouteMetric(n))"
        if let v4 = assignment.ipv4 {
            try ip(ue, "addr", "replace", "\(v4.address)/\(v4.prefixLength)", "dev", dev)
        }
        if let v6 = assignment.ipv6 {
            try ip(ue, "addr", "replace", "\(v6.address)/\(v6.prefixLength)", "dev", dev)
        }
        try ip(ue, "link", "set", dev, "up")
        if let v4 = assignment.ipv4 {
            try ip(ue, "route", "replace", "default", "dev", dev, "metric", metric)
            try ip(ue, "route", "replace", "default", "dev", dev, "table", table)
            _ = try? ip(ue, "rule", "del", "from", v4.address, "table", table)
            try ip(ue, "rule", "add", "from", v4.address, "table", table, "priority", table)
        }
        if assignment.ipv6 != nil {
            let prefix = topology.bearerIPv6Prefix(n)
            try ip(ue, "-6", "route", "replace", "default", "dev", dev, "metric", metric)
            try ip(ue, "-6", "route", "replace", "default", "dev", dev, "table", table)
            _ = try? ip(ue, "-6", "rule", "del", "from", prefix, "table", table)
            try ip(ue, "-6", "rule", "add", "from", prefix, "table", table, "priority", table)
        }
    }

    /// Removes modem `n`'s addresses, routes and rules and sets its wwan interface down.
    func deconfigureBearer(_ n: Int, interface: String? = nil) throws {
        let ue = topology.ueNamespace, dev = interface ?? topology.modemInterface(n)
        let table = "\(topology.bearerRouteTable(n))"
        _ = try? ip(ue, "rule", "del", "from", topology.bearerAddress(n), "table", table)
        _ = try? ip(ue, "-6", "rule", "del", "from", topology.bearerIPv6Prefix(n), "table", table)
        try ip(ue, "addr", "flush", "dev", dev)
        try ip(ue, "link", "set", dev, "down")
    }

    /// Deletes whatever exists of the world: namespaces (their links go with them) and the
    /// per-namespace resolv.conf. Idempotent; never fails on something already gone.
    static func destroy(_ topology: WorldTopology) {
        let existing = listNamespaces()
        for ns in topology.namespaces + RouterModem.namespaces(prefix: topology.prefix, among: existing)
        where existing.contains(ns) {
            _ = try? Subprocess.run(["ip", "netns", "del", ns])
        }
        let dir = "/etc/netns/\(topology.ueNamespace)"
        unlink("\(dir)/resolv.conf")
        rmdir(dir)
        rmdir("/etc/netns")  // only when empty, as we may have created it
    }

    /// The names of all named network namespaces (`ip netns list`).
    static func listNamespaces() -> [String] {
        guard let result = try? Subprocess.run(["ip", "netns", "list"]), result.status == 0 else { return [] }
        return result.text.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    /// `/etc/netns/<ue>/resolv.conf` points the device at the Wi-Fi DNS: `ip netns exec`
    /// bind-mounts it, so programs run by `sim exec` resolve api.truid.test as on real Wi-Fi.
    private func writeResolvConf() throws {
        let dir = "/etc/netns/\(topology.ueNamespace)"
        try FileSystem.makeDirectories(dir)
        try FileSystem.write(
            "# cellpath sim: Wi-Fi DNS of \(topology.prefix)\nnameserver \(WorldTopology.wifiGateway)\n",
            to: "\(dir)/resolv.conf")
    }

    private func ip(_ ns: String, _ arguments: String...) throws {
        try Subprocess.check(["ip", "-n", ns] + arguments)
    }

    /// Writes sysctls inside namespace `ns` (keys as paths under /proc/sys).
    private func sysctl(_ ns: String, _ settings: [String: String]) throws {
        let script = settings.sorted { $0.key < $1.key }.map { "echo \($0.value) > /proc/sys/\($0.key)" }.joined(
            separator: " && ")
        try Subprocess.check(["ip", "netns", "exec", ns, "sh", "-c", script])
    }
}
