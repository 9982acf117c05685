import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport

/// The data path of a router-mode modem (a Huawei HiLink stick, `netDevice == .usbEthernet`):
/// the host sees an Ethernet device `usbN` (a veth end in the device namespace); behind it, in
/// the modem's own namespace `<prefix>modemN`, the modem's LAN `lan0` (192.168.8.1/24) with a
/// DHCP server and DNS forwarder (dnsmasq), and its always-connected bearer `lte0`, modem N's
/// TUN end of the radio link, holding the bearer address 100.64.23.(10+N), onto which the LAN
/// is NATed (nftables). The carrier thus sees the SIM's traffic from its bearer address.
/// Blocking; any plain thread.
struct RouterModem {
    let topology: WorldTopology
    let index: Int

    /// The modem's LAN, as Huawei's HiLink firmware sets it up.
    static let lanAddress = "192.168.8.1"
    static let lanNetwork = "192.168.8.0/24"
    static let dhcpRange = "192.168.8.100,192.168.8.200,255.255.255.0,12h"
    /// The modem's side of the USB Ethernet link, in its namespace.
    static let lanInterface = "lan0"
    /// The modem's bearer (its end of the radio TUN pair), in its namespace.
    static let wanInterface = "lte0"

    /// Whether `modem` is a router-mode modem (no MBIM or QMI port; an Ethernet net device).
    static func isRouter(_ modem: SimulatedModem) -> Bool { modem.profile.netDevice == .usbEthernet }

    /// The indexes of the router-mode modems of `scenario`.
    static func indexes(_ scenario: Scenario) -> [Int] {
        scenario.modems.indices.filter { isRouter(scenario.modems[$0]) }
    }

    /// The host's net device of router-mode modem `n`, `usbN` (cdc_ether's name).
    static func hostInterface(_ n: Int) -> String { "usb\(n)" }

    /// The modem's namespace, `<prefix>modemN`.
    var namespace: String { Self.namespace(prefix: topology.prefix, index) }

    static func namespace(prefix: String, _ n: Int) -> String { "\(prefix)modem\(n)" }

    /// The router-modem namespaces of world `prefix` among `existing` (those a killed daemon left too).
    static func namespaces(prefix: String, among existing: [String]) -> [String] {
        existing.filter { name in
            name.hasPrefix(prefix + "modem") && !name.dropFirst(prefix.count + 5).isEmpty
                && name.dropFirst(prefix.count + 5).allSatisfy(\.isNumber)
        }
    }

    /// The DHCP leases file of the modem's dnsmasq.
    func leaseFile(_ run: RunDirectory) -> String { "\(run.path)/modem\(index)-dhcp.leases" }

    /// Creates the modem's namespace: loopback up, forwarding on, loose reverse-path filtering,
    /// quiet IPv6 (as the world's other namespaces).
    func createNamespace() throws {
        try Subprocess.check(["ip", "netns", "add", namespace])
        try Subprocess.check(["ip", "-n", namespace, "link", "set", "lo", "up"])
        let settings = [
            "net/ipv4/ip_forward": "1", "net/ipv4/conf/all/rp_filter": "2",
            "net/ipv4/conf/default/rp_filter": "2",
            "net/ipv6/conf/all/disable_ipv6": "1", "net/ipv6/conf/default/disable_ipv6": "1"
        ]
        let script = settings.merging(WorldBuilder.quietIPv6, uniquingKeysWith: { $1 }).sorted { $0.key < $1.key }
            .map { "echo \($0.value) > /proc/sys/\($0.key)" }.joined(separator: " && ")
        try Subprocess.check(["ip", "netns", "exec", namespace, "sh", "-c", script])
    }

    /// Links the modem to the device (`usbN` ↔ `lan0`, the host's end left down as the kernel
    /// leaves a new Ethernet device), gives the bearer its address and default route, and NATs
    /// the LAN onto the bearer address. `lte0` exists (the data plane made it).
    func configure() throws {
        let ns = namespace, ue = topology.ueNamespace, host = Self.hostInterface(index)
        let bearer = topology.bearerAddress(index)
        try ip(ns, "link", "add", Self.lanInterface, "type", "veth", "peer", "name", host, "netns", ue)
        try ip(ns, "addr", "add", "\(Self.lanAddress)/24", "dev", Self.lanInterface)
        try ip(ns, "link", "set", Self.lanInterface, "up")
        try ip(ns, "addr", "add", "\(bearer)/32", "dev", Self.wanInterface)
        try ip(ns, "link", "set", Self.wanInterface, "up")
        try ip(ns, "route", "add", "default", "dev", Self.wanInterface)
        let nft = ["ip", "netns", "exec", ns, "nft"]
        try Subprocess.check(nft + ["add", "table", "ip", "hilink"])
        try Subprocess.check(
            nft + [
                "add", "chain", "ip", "hilink", "postrouting",
                "{ type nat hook postrouting priority srcnat ; }"
            ])
        try Subprocess.check(
            nft + [
                "add", "rule", "ip", "hilink", "postrouting", "oifname", Self.wanInterface,
                "ip", "saddr", Self.lanNetwork, "snat", "to", bearer
            ])
    }

    /// Starts the modem's DHCP server and DNS forwarder (to the carrier DNS, through the bearer)
    /// on `lan0`, as a child logging to `logFD`; returns it once it listens.
    func startDHCP(run: RunDirectory, logFD: Int32) throws -> WorldChild {
        let arguments = [
            "ip", "netns", "exec", namespace, "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null",
            "--no-resolv", "--no-hosts", "--interface=\(Self.lanInterface)", "--bind-interfaces",
            "--listen-address=\(Self.lanAddress)", "--port=53",
            "--server=\(WorldTopology.carrierDNSAddress)",
            "--dhcp-range=\(Self.dhcpRange)", "--dhcp-option=option:router,\(Self.lanAddress)",
            "--dhcp-option=option:dns-server,\(Self.lanAddress)", "--dhcp-leasefile=\(leaseFile(run))",
            "--dhcp-authoritative", "--pid-file=", "--user=root", "--log-facility=-", "--log-dhcp"
        ]
        let pid = try Subprocess.start(arguments, Spawn.Options(stdout: logFD, stderr: logFD))
        let deadline = MonotonicClock.now + 5
        while MonotonicClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw CellpathError(
                    .unavailable,
                    "dnsmasq (modem \(index) DHCP) exited with status \(Spawn.exitStatus(status))")
            }
            if isUDPListening(pid: pid, address: Self.lanAddress, port: 53) {
                return WorldChild(
                    name: "dhcp-modem\(index)", detail: "\(Self.lanAddress) DHCP and DNS in \(namespace)",
                    pid: pid)
            }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        _ = Spawn.wait(pid)
        throw CellpathError(.unavailable, "dnsmasq (modem \(index) DHCP) did not start listening on \(Self.lanAddress)")
    }

    private func ip(_ ns: String, _ arguments: String...) throws {
        try Subprocess.check(["ip", "-n", ns] + arguments)
    }
}
