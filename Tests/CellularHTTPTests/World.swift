import CellpathCore
import CellularHTTP
import FoundationEssentials
import Glibc
import SystemSupport
import TestSupport
import Testing
import Workflow

/// The netns world of Fixtures/world.sh, set up once per suite by the `.world` trait.
final class World: Sendable {
    @TaskLocal static var current: World?

    let prefix: String
    let workdir: String
    var ue: String { prefix + "ue" }
    static let fixtures: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast()
        return parts.joined(separator: "/") + "/Fixtures"
    }()
    static let probe: String = {
        if let env = getenv("CELLPATH_FETCH_PROBE") { return String(cString: env) }
        var dir = CellpathBinary.path.split(separator: "/", omittingEmptySubsequences: false)
        dir.removeLast()
        return dir.joined(separator: "/") + "/cellpath-fetch-probe"
    }()

    init() throws {
        prefix = "cht\(getpid() % 100000)-"
        workdir = "/tmp/\(prefix)work"
        let r = try ProcessRunner.run(["/bin/bash", World.fixtures + "/world.sh", "up", prefix, workdir])
        if r.status != 0 {
            _ = try? ProcessRunner.run(["/bin/bash", World.fixtures + "/world.sh", "down", prefix, workdir])
            throw WorldError("world.sh up failed: \(r.stderr)")
        }
    }

    /// Stops the servers and deletes the namespaces.
    func down() {
        _ = try? ProcessRunner.run(["/bin/bash", World.fixtures + "/world.sh", "down", prefix, workdir])
        FileSystem.removeTree(workdir)
    }

    /// Runs a command inside the client namespace.
    @discardableResult
    func ueRun(_ args: [String], environment: [String: String]? = nil) throws -> ProcessResult {
        try ProcessRunner.run(["ip", "netns", "exec", ue] + args, environment: environment)
    }

    /// What one probe run printed: the check_url report, split, and the exit status and stderr.
    struct ProbeRun {
        var report: FetchReport
        var callback: CheckCallback?
        var status: Int32
        var stderr: String
    }

    /// Runs the probe in the client namespace; returns its decoded report and raw output.
    func fetch(_ args: [String], preload: String? = nil) throws -> ProbeRun {
        var env = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        if let preload { env["LD_PRELOAD"] = preload }
        let r = try ueRun([World.probe] + args, environment: env)
        guard let report = try? JSONDecoder().decode(CheckURLReport.self, from: Data(r.stdout.utf8)) else {
            throw WorldError("probe output is not a report (status \(r.status)): \(r.stdout) \(r.stderr)")
        }
        return ProbeRun(report: report.trace, callback: report.callback, status: r.status, stderr: r.stderr)
    }

    /// Standard probe arguments on wwan0 with the carrier DNS, the test CA and `url`.
    func fetchOnCellular(_ url: String, _ extra: [String] = [], preload: String? = nil) throws -> ProbeRun {
        try fetch(
            ["--interface", "wwan0", "--dns", "100.64.0.53", "--cacert", workdir + "/ca.pem"] + extra + [url],
            preload: preload)
    }

    /// Requests the test server logged since `mark` (a line count from `serverLogMark()`).
    func serverRequests(since mark: Int) throws -> [JSONValue] {
        let text = try ProcessRunner.run(["cat", workdir + "/server.log"]).stdout
        return text.split(separator: "\n").dropFirst(mark).compactMap { JSONValue.parse(Array($0.utf8)) }
    }

    func serverLogMark() throws -> Int {
        try ProcessRunner.run(["cat", workdir + "/server.log"]).stdout.split(separator: "\n").count
    }

    /// Lines dnsmasq logged (queries include the client address).
    func dnsLog() throws -> String { try ProcessRunner.run(["cat", workdir + "/dnsmasq.log"]).stdout }

    /// Writes a hook the server runs (in the carrier namespace) on `GET /hook?name=NAME`.
    func writeHook(_ name: String, _ shell: String) throws {
        let path = "\(workdir)/hooks/\(name).sh"
        guard let f = fopen(path, "w") else { throw WorldError("cannot write \(path)") }
        fputs(shell + "\n", f)
        fclose(f)
    }

    /// Stops the carrier DNS server (SIGSTOP) while `body` runs: it is there but never answers,
    /// or only once `resumeAfter` seconds have passed (then it answers the queries it holds).
    func withCarrierDNSSilent<T>(resumeAfter: Double? = nil, _ body: () throws -> T) throws -> T {
        let text = try ProcessRunner.run(["cat", workdir + "/dnsmasq.pid"]).stdout
        let pid = try #require(pid_t(text.filter { !$0.isWhitespace }), "no dnsmasq pid in \(workdir)")
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        if let resumeAfter {
            try Threads.detach {
                usleep(UInt32(resumeAfter * 1_000_000)); kill(pid, SIGCONT)
            }
        }
        return try body()
    }

    /// Captures packets on `interface` in the client namespace while `body` runs; returns them.
    /// `filter` is a pcap filter expression applied to what was captured; by default every packet
    /// but ARP: the kernel re-validates the Wi-Fi gateway's neighbour entry on its own schedule
    /// after an earlier test's Wi-Fi traffic, and an ARP probe carries nothing of a fetch.
    /// The probe exits only once its connections are closed, so every packet of its fetch has
    /// passed the interface when `body` returns; the capture is read once it holds at least as
    /// many packets as the interface counted meanwhile, however slowly tcpdump runs.
    func capture<T>(
        on interface: String = "wlan0", filter: String = "not arp", _ body: () throws -> T
    ) throws -> (value: T, packets: [String]) {
        let file = "\(workdir)/cap-\(interface)-\(UInt32.random(in: 0...UInt32.max)).pcap"
        let log = file + ".log"
        let tcpdump = try BackgroundProcess(
            ["ip", "netns", "exec", ue, "tcpdump", "--immediate-mode", "-i", interface, "-n", "-U", "-w", file],
            output: log)
        defer { tcpdump.stop() }
        try waitUntil("tcpdump listens on \(interface)") {
            try ProcessRunner.run(["cat", log]).stdout.contains("listening on")
        }
        let before = try packetCount(on: interface)
        let value = try body()
        let carried = try packetCount(on: interface) - before
        try waitUntil("the capture on \(interface) holds the \(carried) packets the interface carried") {
            try packets(in: file).count >= carried
        }
        tcpdump.stop()
        return (value, try packets(in: file, filter: filter))
    }

    /// The packets in a pcap file, one `tcpdump -r` line each (a record still being written is left out).
    private func packets(in file: String, filter: String = "") throws -> [String] {
        try ProcessRunner.run(["tcpdump", "-r", file, "-n"] + (filter.isEmpty ? [] : [filter])).stdout
            .split(separator: "\n").map(String.init)
    }

    /// Packets the kernel counted on `interface` in the client namespace, both directions.
    private func packetCount(on interface: String) throws -> Int {
        let text = try ProcessRunner.run(["ip", "-n", ue, "-j", "-s", "link", "show", "dev", interface]).stdout
        let stats = try #require(
            try JSONValue.parse(text).array?.first?["stats64"], "no statistics for \(interface): \(text)")
        let rx = try #require(stats["rx"]?["packets"]?.int), tx = try #require(stats["tx"]?["packets"]?.int)
        return rx + tx
    }

    /// Polls `condition` every 20 ms until it holds; throws when it does not within `timeout`.
    func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool) throws {
        guard try Poll.until(timeout: timeout, condition) else { throw WorldError("timed out waiting until \(what)") }
    }
}

struct WorldError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Sets up the world once around a whole suite and always tears it down.
struct WorldTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let world = try World()
        defer { world.down() }
        try await World.$current.withValue(world) { try await function() }
    }
}

extension Trait where Self == WorldTrait {
    static var world: Self { Self() }
}
