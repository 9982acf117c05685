import Glibc
import SimulatedModems
import Synchronization
import SystemSupport
import TestSupport
import Testing

/// A network namespace of the test's own standing in for the device: TUN `wwan0` and `wwan1`
/// (down, strict rp_filter, as cdc_mbim/qmi_wwan links start) and a `wlan0` with the default
/// route. `cellpath` runs inside it (`ip netns exec`) against simulated modems of the test's
/// process (their ptys and sysfs are files: any namespace reaches them), with a bearer-record
/// directory of its own. Deleted at the end, with anything still running inside (proxies).
final class DeviceNamespace {
    /// Numbers the namespaces of this process, so that two are never one.
    private static let created = Atomic<Int>(0)
    let name = "cpbr\(getpid() % 100_000)-\(DeviceNamespace.created.add(1, ordering: .relaxed).newValue)"
    let stateDirectory: String
    static let path = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]

    init() throws {
        _ = try ProcessRunner.run(["ip", "netns", "del", name])
        stateDirectory = try TemporaryDirectory.make("cellpath-bearers")
        let add = try ProcessRunner.run(["ip", "netns", "add", name])
        #expect(add.status == 0, "ip netns add: \(add.stderr)")
        _ = try shell(
            """
            ip link set lo up && ip tuntap add wwan0 mode tun && ip tuntap add wwan1 mode tun && \
            ip link add wlan0 type veth peer name wlanpeer && ip link set wlan0 up && ip link set wlanpeer up && \
            ip addr add 192.0.2.23/24 dev wlan0 && ip route add default via 192.0.2.1 dev wlan0 metric 600 && \
            echo 1 > /proc/sys/net/ipv4/conf/wwan0/rp_filter && echo 1 > /proc/sys/net/ipv4/conf/wwan1/rp_filter
            """)
    }

    deinit {
        if let pids = try? ProcessRunner.run(["ip", "netns", "pids", name]) {
            for pid in pids.stdout.split(separator: "\n").compactMap({ Int32($0) }) where pid != getpid() {
                kill(pid, SIGKILL)
            }
        }
        _ = try? ProcessRunner.run(["ip", "netns", "del", name])
        FileSystem.removeTree(stateDirectory)
    }

    /// The environment of cellpath inside: no user configuration, the fleet's sysfs and /dev,
    /// the namespace's record directory.
    func environment(_ fleet: SimulatedFleet, _ extra: [String: String] = [:]) -> [String: String] {
        var env = Self.path
        env["HOME"] = "/nonexistent"
        env["XDG_CONFIG_HOME"] = "/nonexistent"
        env["LANG"] = "C.UTF-8"
        env["CELLPATH_SYSTEM_CONFIG"] = "/nonexistent/cellpath.conf"
        env["CELLPATH_STATE_DIR"] = stateDirectory
        for (key, value) in fleet.environment.merging(extra, uniquingKeysWith: { $1 }) { env[key] = value }
        return env
    }

    /// `cellpath ARGS…` inside the namespace.
    func cellpath(
        _ arguments: [String], _ fleet: SimulatedFleet, environment extra: [String: String] = [:],
        prefix: [String] = []
    ) throws -> ProcessResult {
        try ProcessRunner.run(
            ["ip", "netns", "exec", name] + prefix + [CellpathBinary.path] + arguments,
            environment: environment(fleet, extra))
    }

    /// `cellpath ARGS…` inside the namespace, in the background, its output going to `output`.
    func start(_ arguments: [String], _ fleet: SimulatedFleet, output: String) throws -> BackgroundProcess {
        try BackgroundProcess(
            ["ip", "netns", "exec", name, CellpathBinary.path] + arguments, output: output,
            environment: environment(fleet))
    }

    /// Runs a program inside the namespace (mbimcli, qmicli).
    func run(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(["ip", "netns", "exec", name] + arguments, environment: Self.path)
    }

    func shell(_ script: String) throws -> String {
        let result = try run(["sh", "-c", script])
        #expect(result.status == 0, "\(script): \(result.stderr)")
        return result.stdout
    }

    /// What cellpath left on `interface` and in the namespace: its address, routes through it,
    /// source-address rules, a loosened rp_filter, the link up, a bearer record. Empty when
    /// everything is as the namespace started.
    func leftovers(_ interface: String) throws -> [String] {
        var found: [String] = []
        let addresses = try shell("ip -4 addr show dev \(interface)")
        if addresses.contains("inet ") { found.append("address: \(addresses)") }
        let routes = try shell("ip -4 route show table all dev \(interface)")
        if !routes.isEmpty { found.append("routes: \(routes)") }
        let rules = try shell("ip -4 rule").split(separator: "\n").filter {
            !$0.hasPrefix("0:") && !$0.hasPrefix("32766:") && !$0.hasPrefix("32767:")
        }
        if !rules.isEmpty { found.append("rules: \(rules)") }
        let addresses6 = try shell("ip -6 addr show dev \(interface) scope global")
        if !addresses6.isEmpty { found.append("IPv6 address: \(addresses6)") }
        let routes6 = try shell("ip -6 route show table all dev \(interface)").split(separator: "\n")
            .filter { !$0.contains("fe80::") && !$0.hasPrefix("multicast") && !$0.hasPrefix("local fe80") }
        if !routes6.isEmpty { found.append("IPv6 routes: \(routes6)") }
        let rules6 = try shell("ip -6 rule").split(separator: "\n").filter {
            !$0.hasPrefix("0:") && !$0.hasPrefix("32766:")
        }
        if !rules6.isEmpty { found.append("IPv6 rules: \(rules6)") }
        let rpFilter = try shell("cat /proc/sys/net/ipv4/conf/\(interface)/rp_filter").filter { !$0.isWhitespace }
        if rpFilter != "1" { found.append("rp_filter \(rpFilter)") }
        if try shell("ip link show \(interface)").contains(",UP") { found.append("\(interface) up") }
        let records = try ProcessRunner.run(["ls", "-A", stateDirectory]).stdout
        if !records.isEmpty { found.append("records: \(records)") }
        return found
    }
}

/// Waits (at most 5 s) until `condition` holds: the simulated modem updates what tests read
/// (client IDs, the bearer) on its own thread, just after answering.
func eventually(_ condition: () -> Bool) -> Bool { Poll.until(timeout: .seconds(5), condition) }

/// Waits (at most 30 s) until the file at `path` contains `text`.
func waitForText(_ text: String, in path: String) -> Bool {
    Poll.until(timeout: .seconds(30)) { FileSystem.readText(path)?.contains(text) == true }
}
