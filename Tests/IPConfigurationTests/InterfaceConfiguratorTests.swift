import CellpathCore
import Glibc
import TestSupport
import Testing

/// The bearer's addressing applied and undone over rtnetlink, in a namespace of the test's own:
/// a TUN `wwan0` (as cdc_mbim/qmi_wwan devices look) beside a `wlan0` with the default route.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads)
struct InterfaceConfiguratorTests {
    let namespace = "cpip\(getpid() % 100000)"
    static let probe: String = {
        var dir = CellpathBinary.path.split(separator: "/", omittingEmptySubsequences: false)
        dir.removeLast()
        return dir.joined(separator: "/") + "/cellpath-ipconfig-probe"
    }()
    var state: String { "/tmp/\(namespace)-state.json" }

    /// Runs `arguments` inside the namespace.
    @discardableResult
    func inside(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(
            ["ip", "netns", "exec", namespace] + arguments, environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
    }

    func shell(_ script: String) throws -> String {
        let result = try inside(["sh", "-c", script])
        #expect(result.status == 0, "\(script): \(result.stderr)")
        return result.stdout
    }

    /// A namespace with wwan0 (TUN, down, strict rp_filter) and wlan0 (veth, 192.0.2.23/24, default route metric 600).
    func withNamespace(_ body: () throws -> Void) throws {
        _ = try ProcessRunner.run(["ip", "netns", "del", namespace])
        #expect(try ProcessRunner.run(["ip", "netns", "add", namespace]).status == 0)
        defer {
            _ = try? ProcessRunner.run(["ip", "netns", "del", namespace])
            unlink(state)
        }
        _ = try shell(
            """
            ip link set lo up && ip tuntap add wwan0 mode tun && ip link add wlan0 type veth peer name wlanpeer && \
            ip link set wlan0 up && ip link set wlanpeer up && ip addr add 192.0.2.23/24 dev wlan0 && \
            ip route add default via 192.0.2.1 dev wlan0 metric 600 && echo 1 > /proc/sys/net/ipv4/conf/wwan0/rp_filter
            """)
        try body()
    }

    /// What the tests look at: the route the kernel picks from the bearer address and from
    /// anywhere, the rules, the addresses of wwan0, its rp_filter and whether it is up.
    func snapshot() throws -> (
        fromBearer: String, unbound: String, rules: String, addresses: String, rpFilter: String, up: Bool
    ) {
        (
            try shell("ip route get 198.51.100.7 from 100.64.23.10 2>&1 || true"),
            try shell("ip route get 198.51.100.7"),
            try shell("ip rule"),
            try shell("ip -4 addr show dev wwan0"),
            try shell("cat /proc/sys/net/ipv4/conf/wwan0/rp_filter").filter { !$0.isWhitespace },
            try shell("ip link show wwan0").contains(",UP")
        )
    }

    @Test func applyThenUndoLeavesTheInterfaceAsItWas() throws {
        try withNamespace {
            let before = try snapshot()
            let apply = try inside([Self.probe, "apply", "wwan0", "100.64.23.10", "1400", state])
            #expect(apply.status == 0, "\(apply.stderr)")
            let after = try snapshot()
            #expect(after.addresses.contains("inet 100.64.23.10/32"))
            #expect(after.up && after.rpFilter == "2")
            // From the bearer address, even the kernel's own packets leave through wwan0 …
            #expect(after.fromBearer.contains("dev wwan0"), "\(after.fromBearer)")
            #expect(after.rules.contains("from 100.64.23.10 lookup"))
            // … and unbound traffic keeps its default route through wlan0 (the bearer's is worse).
            #expect(after.unbound.contains("dev wlan0"), "\(after.unbound)")
            let routes = try shell("ip route show default")
            #expect(routes.contains("default dev wwan0") && routes.contains("metric 1000"), "\(routes)")
            #expect(try shell("ip link show wwan0").contains("mtu 1400"))

            let undo = try inside([Self.probe, "undo", state])
            #expect(undo.status == 0, "\(undo.stderr)")
            let restored = try snapshot()
            #expect(restored.addresses == before.addresses && restored.rules == before.rules)
            #expect(restored.rpFilter == "1" && !restored.up && restored.unbound == before.unbound)
            #expect(try shell("ip route show default") == "default via 192.0.2.1 dev wlan0 metric 600 \n")
            #expect(try shell("ip link show wwan0").contains("mtu 1500"))
        }
    }

    /// wlan0 gets IPv6 too (2001:db8:2::23/64, default route via 2001:db8:2::1 metric 600), and
    /// wwan0 starts with IPv6 disabled, as the simulator's and many distributions' do.
    func withDualStackNamespace(_ body: () throws -> Void) throws {
        try withNamespace {
            _ = try shell(
                """
                sysctl -qw net.ipv6.conf.wlan0.disable_ipv6=0 && echo 1 > /proc/sys/net/ipv6/conf/wwan0/disable_ipv6 && \
                ip -6 addr add 2001:db8:2::23/64 dev wlan0 nodad && ip -6 route add default via 2001:db8:2::1 dev wlan0 metric 600
                """)
            try body()
        }
    }

    /// The IPv6 part of what the kernel picks and holds.
    func snapshot6() throws -> (
        fromBearer: String, unbound: String, rules: String, addresses: String, disabled: String, defaults: String
    ) {
        (
            try shell("ip -6 route get 2001:db8:113::10 from 2001:db8:64:10::2 2>&1 || true"),
            try shell("ip -6 route get 2001:db8:113::10"),
            try shell("ip -6 rule"),
            try shell("ip -6 addr show dev wwan0 scope global"),
            try shell("cat /proc/sys/net/ipv6/conf/wwan0/disable_ipv6").filter { !$0.isWhitespace },
            try shell("ip -6 route show default")
        )
    }

    @Test func dualStackApplyThenUndoConfiguresBothFamiliesAndRestores() throws {
        try withDualStackNamespace {
            let before = try snapshot(), before6 = try snapshot6()
            #expect(before6.disabled == "1" && before6.unbound.contains("dev wlan0"))
            let apply = try inside([
                Self.probe, "apply", "--ipv6", "2001:db8:64:10::2/64@2001:db8:64:10::1",
                "wwan0", "100.64.23.10", state
            ])
            #expect(apply.status == 0, "\(apply.stderr)")
            let after = try snapshot(), after6 = try snapshot6()
            #expect(after.addresses.contains("inet 100.64.23.10/32") && after.fromBearer.contains("dev wwan0"))
            #expect(after6.disabled == "0")
            // The address with its prefix, never tentative (a tentative address cannot be bound).
            #expect(
                after6.addresses.contains("inet6 2001:db8:64:10::2/64") && !after6.addresses.contains("tentative"),
                "\(after6.addresses)")
            // From the bearer's IPv6 address, packets leave through wwan0 via the gateway …
            #expect(after6.fromBearer.contains("via 2001:db8:64:10::1 dev wwan0"), "\(after6.fromBearer)")
            #expect(after6.rules.contains("from 2001:db8:64:10::2 lookup"), "\(after6.rules)")
            // … unbound IPv6 traffic keeps Wi-Fi, the bearer's default route is worse.
            #expect(after6.unbound.contains("dev wlan0"), "\(after6.unbound)")
            #expect(
                after6.defaults.contains("default via 2001:db8:64:10::1 dev wwan0")
                    && after6.defaults.contains("metric 1000"),
                "\(after6.defaults)")
            // The bound address can be bound (no DAD) and a socket bound to wwan0 and it routes there.
            #expect(try shell("ip -6 route get 2001:db8:113::10 oif wwan0").contains("dev wwan0"))

            let undo = try inside([Self.probe, "undo", state])
            #expect(undo.status == 0, "\(undo.stderr)")
            let restored = try snapshot(), restored6 = try snapshot6()
            #expect(restored.addresses == before.addresses && restored.rules == before.rules && !restored.up)
            #expect(restored6.rules == before6.rules && restored6.defaults == before6.defaults, "\(restored6.defaults)")
            #expect(restored6.disabled == "1" && restored6.unbound == before6.unbound)
            #expect(!(try shell("ip -6 route show table all")).contains("wwan0 proto static"))
        }
    }

    @Test func anIPv6OnlyBearerLeavesIPv4Alone() throws {
        try withDualStackNamespace {
            let before = try snapshot()
            let apply = try inside([Self.probe, "apply", "--ipv6", "2001:db8:64:10::2/64", "wwan0", "-", state])
            #expect(apply.status == 0, "\(apply.stderr)")
            let after = try snapshot(), after6 = try snapshot6()
            #expect(after.addresses == before.addresses && after.rules == before.rules && after.rpFilter == "1")
            #expect(try shell("ip -4 route show default") == "default via 192.0.2.1 dev wlan0 metric 600 \n")
            // Without a gateway, the default route goes through the point-to-point device alone.
            #expect(
                after6.fromBearer.contains("dev wwan0") && after6.defaults.contains("default dev wwan0"),
                "\(after6.defaults)")
            #expect(try inside([Self.probe, "undo", state]).status == 0)
            #expect(try snapshot6().addresses.isEmpty)
        }
    }

    /// rp_filter has no IPv6 counterpart: the kernel accepts a packet for a local address on any
    /// interface (the weak host model), whatever route leads back to its source. A reply from a
    /// server reached through the bearer arrives on wwan0 while unbound IPv6 traffic to that
    /// server would leave through wlan0: it must be delivered. The bearer here is a veth whose
    /// peer namespace plays the carrier and sends the "reply" (an echo request answered by the
    /// kernel is the same path).
    @Test func anIPv6ReplyArrivingOnTheBearerIsAcceptedWithoutReversePathFiltering() throws {
        let carrier = namespace + "c"
        _ = try ProcessRunner.run(["ip", "netns", "del", carrier])
        #expect(try ProcessRunner.run(["ip", "netns", "add", carrier]).status == 0)
        defer { _ = try? ProcessRunner.run(["ip", "netns", "del", carrier]) }
        try withDualStackNamespace {
            _ = try shell(
                "ip link add wwan1 type veth peer name radio1 netns \(carrier) && sysctl -qw net.ipv6.conf.wwan1.disable_ipv6=0"
            )
            let apply = try inside([
                Self.probe, "apply", "--ipv6", "2001:db8:64:11::2/64@2001:db8:64:11::1", "wwan1", "-", state
            ])
            #expect(apply.status == 0, "\(apply.stderr)")
            // The carrier side: the gateway, and the server 2001:db8:113::10 behind it.
            let setup = try ProcessRunner.run([
                "ip", "netns", "exec", carrier, "sh", "-c",
                """
                ip link set lo up && ip link set radio1 up && ip -6 addr add 2001:db8:64:11::1/64 dev radio1 nodad && \
                ip -6 addr add 2001:db8:113::10/128 dev lo
                """
            ])
            #expect(setup.status == 0, "\(setup.stderr)")
            // The source's route in the main table leads to wlan0, not to wwan1, where it arrives …
            #expect(try shell("ip -6 route get 2001:db8:113::10").contains("dev wlan0"))
            let delivered = try ProcessRunner.run([
                "ip", "netns", "exec", carrier, "ping", "-6", "-c", "3", "-i", "0.5", "-W", "3",
                "-I", "2001:db8:113::10", "2001:db8:64:11::2"
            ])
            // … and it is delivered and answered through wwan1 (the source rule of the bearer address;
            // the first echo may wait for neighbour discovery).
            #expect(delivered.status == 0, "\(delivered.stdout) \(delivered.stderr)")
            // (A reply through wlan0 could not reach the carrier: wlan0's peer is in this namespace.)
            #expect(try inside([Self.probe, "undo", state]).status == 0)
        }
    }

    @Test func whatWasThereBeforeIsReusedAndLeftInPlace() throws {
        try withNamespace {
            // Another tool configured the address and brought the link up.
            _ = try shell("ip link set wwan0 up && ip addr add 100.64.23.10/32 dev wwan0")
            #expect(try inside([Self.probe, "apply", "wwan0", "100.64.23.10", state]).status == 0)
            #expect(try inside([Self.probe, "undo", state]).status == 0)
            let after = try snapshot()
            #expect(after.addresses.contains("inet 100.64.23.10/32") && after.up)
            #expect(!after.rules.contains("100.64.23.10"))
        }
    }

    @Test func withoutCAPNETADMINNothingChangesAndTheExitCodeIs77() throws {
        try withNamespace {
            let before = try snapshot()
            let denied = try inside([
                "setpriv", "--bounding-set", "-net_admin", "--inh-caps", "-net_admin",
                Self.probe, "apply", "wwan0", "100.64.23.10", state
            ])
            #expect(denied.status == 77, "\(denied.stderr)")
            #expect(
                denied.stderr.contains("Operation not permitted") || denied.stderr.contains("ermission"),
                "\(denied.stderr)")
            let after = try snapshot()
            #expect(after.addresses == before.addresses && after.rules == before.rules && after.up == before.up)
        }
    }

    @Test func anAddressOfTheWrongFamilyIsADataError() throws {
        try withNamespace {
            let bad = try inside([Self.probe, "apply", "--ipv6", "100.64.23.10/64", "wwan0", "-", state])
            #expect(bad.status == 65 && bad.stderr.contains("is not an IPv6 address"), "\(bad.stderr)")
            #expect(!(try shell("ip link show wwan0").contains(",UP")))
        }
    }

    @Test func aMissingInterfaceIsUnavailable() throws {
        try withNamespace {
            let missing = try inside([Self.probe, "apply", "wwan7", "100.64.23.10", state])
            #expect(missing.status == 69 && missing.stderr.contains("no such interface"), "\(missing.stderr)")
        }
    }
}
