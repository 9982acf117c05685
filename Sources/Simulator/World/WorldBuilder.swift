import CellpathCore
import Glibc
import SystemSupport

/// Creates and deletes the namespaces, links, addresses and routes of a world with iproute2's
/// `ip` (docs/simulator.md "Topology"). TUN devices are created by the data path, which owns
/// them (`DataPlane`); `configureLinks` runs after they exist. Blocking; any plain thread.
struct WorldBuilder {
    var topology: WorldTopology

    /// Creates the three namespaces with loopback up and their sysctls (forwarding in the
    /// carrier, loose reverse-path filtering everywhere).
    func createNamespaces() throws {
        for ns in topology.namespaces {
            try Subprocess.check(["ip", "netns", "add", ns])
            try Subprocess.check(["ip", "-n", ns, "link", "set", "lo", "up"])
        }
        for ns in topology.namespaces {
            var settings = ["net/ipv4/conf/all/rp_filter": "2", "net/ipv4/conf/default/rp_filter": "2"]
            if ns == topology.carrierNamespace { settings["net/ipv4/ip_forward"] = "1" }
            try sysctl(ns, settings)
        }
        try writeResolvConf()
    }

    /// Adds the veth, addresses and routes once the TUN devices exist.
    func configureLinks() throws {
        let ue = topology.ueNamespace, carrier = topology.carrierNamespace, inet = topology.inetNamespace
        typealias T = WorldTopology
        // Wi-Fi: wlan0 (device) ↔ wifi0 (access point in the internet namespace), both TUN.
        try ip(ue, "addr", "add", "\(T.wlanAddress)/24", "dev", T.wlanInterface)
        try ip(ue, "link", "set", T.wlanInterface, "up")
        try ip(ue, "route", "add", "default", "via", T.wifiGateway, "dev", T.wlanInterface, "metric", "\(T.wlanRouteMetric)")
        try ip(inet, "addr", "add", "\(T.wifiGateway)/24", "dev", T.wifiPeerInterface)
        try ip(inet, "link", "set", T.wifiPeerInterface, "up")
        // Carrier ↔ internet veth.
        try ip(carrier, "link", "add", T.carrierVethInterface, "type", "veth", "peer", "name", T.inetVethInterface, "netns", inet)
        try ip(carrier, "addr", "add", "\(T.carrierVethAddress)/30", "dev", T.carrierVethInterface)
        try ip(carrier, "link", "set", T.carrierVethInterface, "up")
        try ip(inet, "addr", "add", "\(T.inetVethAddress)/30", "dev", T.inetVethInterface)
        try ip(inet, "link", "set", T.inetVethInterface, "up")
        // Service addresses live on loopback (no dummy links in this kernel).
        try ip(carrier, "addr", "add", "\(T.carrierEndpointAddress)/32", "dev", "lo")
        try ip(carrier, "addr", "add", "\(T.carrierDNSAddress)/32", "dev", "lo")
        try ip(inet, "addr", "add", "\(T.apiAddress)/32", "dev", "lo")
        // Routes: the carrier reaches the internet through the veth, the internet reaches
        // bearer addresses through the carrier.
        try ip(carrier, "route", "add", "192.0.2.0/24", "via", T.inetVethAddress, "dev", T.carrierVethInterface)
        try ip(carrier, "route", "add", "203.0.113.0/24", "via", T.inetVethAddress, "dev", T.carrierVethInterface)
        try ip(inet, "route", "add", T.bearerNetwork, "via", T.carrierVethAddress, "dev", T.inetVethInterface)
        // Radio links: each bearer address is routed to its modem's TUN peer.
        for n in 0..<topology.modemCount {
            try ip(carrier, "link", "set", topology.radioInterface(n), "up")
            try ip(carrier, "route", "add", "\(topology.bearerAddress(n))/32", "dev", topology.radioInterface(n))
        }
        // No IPv6 on TUN links and the veth until the simulator serves it (the kernel would
        // otherwise send router solicitations and MLD reports into them).
        var ueSettings: [String: String] = ["net/ipv6/conf/\(T.wlanInterface)/disable_ipv6": "1"]
        var carrierSettings: [String: String] = ["net/ipv6/conf/\(T.carrierVethInterface)/disable_ipv6": "1"]
        for n in 0..<topology.modemCount {
            ueSettings["net/ipv6/conf/\(topology.modemInterface(n))/disable_ipv6"] = "1"
            carrierSettings["net/ipv6/conf/\(topology.radioInterface(n))/disable_ipv6"] = "1"
        }
        try sysctl(ue, ueSettings)
        try sysctl(carrier, carrierSettings)
        try sysctl(inet, ["net/ipv6/conf/\(T.wifiPeerInterface)/disable_ipv6": "1",
                          "net/ipv6/conf/\(T.inetVethInterface)/disable_ipv6": "1"])
    }

    /// Gives modem `n`'s wwan interface its bearer address and a default route with a metric
    /// above Wi-Fi's, then sets it up: unbound traffic keeps using wlan0, sockets bound to
    /// the interface use it (what NetworkManager does for a WWAN connection). A source-address
    /// rule sends every packet from the bearer address through the interface, the kernel's own
    /// replies (TCP resets) included, as a careful bearer set-up does.
    func configureBearer(_ n: Int) throws {
        let ue = topology.ueNamespace, dev = topology.modemInterface(n)
        let address = topology.bearerAddress(n), table = "\(topology.bearerRouteTable(n))"
        try ip(ue, "addr", "replace", "\(address)/32", "dev", dev)
        try ip(ue, "link", "set", dev, "up")
        try ip(ue, "route", "replace", "default", "dev", dev, "metric", "\(topology.bearerRouteMetric(n))")
        try ip(ue, "route", "replace", "default", "dev", dev, "table", table)
        _ = try? ip(ue, "rule", "del", "from", address, "table", table)
        try ip(ue, "rule", "add", "from", address, "table", table, "priority", table)
    }

    /// Removes modem `n`'s address, routes and rule and sets its wwan interface down.
    func deconfigureBearer(_ n: Int) throws {
        let ue = topology.ueNamespace, dev = topology.modemInterface(n)
        let address = topology.bearerAddress(n), table = "\(topology.bearerRouteTable(n))"
        _ = try? ip(ue, "rule", "del", "from", address, "table", table)
        try ip(ue, "addr", "flush", "dev", dev)
        try ip(ue, "link", "set", dev, "down")
    }

    /// Deletes whatever exists of the world: namespaces (their links go with them) and the
    /// per-namespace resolv.conf. Idempotent; never fails on something already gone.
    static func destroy(_ topology: WorldTopology) {
        let existing = listNamespaces()
        for ns in topology.namespaces where existing.contains(ns) {
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
        try FileSystem.write("# cellpath sim: Wi-Fi DNS of \(topology.prefix)\nnameserver \(WorldTopology.wifiGateway)\n",
                        to: "\(dir)/resolv.conf")
    }

    private func ip(_ ns: String, _ arguments: String...) throws {
        try Subprocess.check(["ip", "-n", ns] + arguments)
    }

    /// Writes sysctls inside namespace `ns` (keys as paths under /proc/sys).
    private func sysctl(_ ns: String, _ settings: [String: String]) throws {
        let script = settings.sorted { $0.key < $1.key }.map { "echo \($0.value) > /proc/sys/\($0.key)" }.joined(separator: " && ")
        try Subprocess.check(["ip", "netns", "exec", ns, "sh", "-c", script])
    }
}
