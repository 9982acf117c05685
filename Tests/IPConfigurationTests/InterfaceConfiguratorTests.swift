import CellpathCore
import Glibc
import Testing
import TestSupport

/// The bearer's addressing applied and undone over rtnetlink, in a namespace of the test's own:
/// a TUN `wwan0` (as cdc_mbim/qmi_wwan devices look) beside a `wlan0` with the default route.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
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
        try ProcessRunner.run(["ip", "netns", "exec", namespace] + arguments, environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
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
        _ = try shell("""
            ip link set lo up && ip tuntap add wwan0 mode tun && ip link add wlan0 type veth peer name wlanpeer && \
            ip link set wlan0 up && ip link set wlanpeer up && ip addr add 192.0.2.23/24 dev wlan0 && \
            ip route add default via 192.0.2.1 dev wlan0 metric 600 && echo 1 > /proc/sys/net/ipv4/conf/wwan0/rp_filter
            """)
        try body()
    }

    /// What the tests look at: the route the kernel picks from the bearer address and from
    /// anywhere, the rules, the addresses of wwan0, its rp_filter and whether it is up.
    func snapshot() throws -> (fromBearer: String, unbound: String, rules: String, addresses: String, rpFilter: String, up: Bool) {
        (try shell("ip route get 198.51.100.7 from 100.64.23.10 2>&1 || true"),
         try shell("ip route get 198.51.100.7"),
         try shell("ip rule"),
         try shell("ip -4 addr show dev wwan0"),
         try shell("cat /proc/sys/net/ipv4/conf/wwan0/rp_filter").filter { !$0.isWhitespace },
         try shell("ip link show wwan0").contains(",UP"))
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
            let denied = try inside(["setpriv", "--bounding-set", "-net_admin", "--inh-caps", "-net_admin",
                                     Self.probe, "apply", "wwan0", "100.64.23.10", state])
            #expect(denied.status == 77, "\(denied.stderr)")
            #expect(denied.stderr.contains("Operation not permitted") || denied.stderr.contains("ermission"), "\(denied.stderr)")
            let after = try snapshot()
            #expect(after.addresses == before.addresses && after.rules == before.rules && after.up == before.up)
        }
    }

    @Test func aMissingInterfaceIsUnavailable() throws {
        try withNamespace {
            let missing = try inside([Self.probe, "apply", "wwan7", "100.64.23.10", state])
            #expect(missing.status == 69 && missing.stderr.contains("no such interface"), "\(missing.stderr)")
        }
    }
}
