import CShims
import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

@testable import Simulator

/// A scenario that validates starts, and `sim down` leaves nothing running in the
/// world's namespaces or on its control ports. Root only.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct WorldCleanupTests {
    @Test(arguments: [
        #"{"modems": [{"sim": null}, {"sim": {"msisdn": "+447940448591"}}]}"#,
        #"{"modems": [{}, {"protocol": "qmi"}, {"sim": {"pinLocked": true}}]}"#
    ])
    func aScenarioThatValidatesStarts(json: String) throws {
        let scenario = try Scenario.decode(Array(json.utf8))
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            let status = try SimulatedWorld.status(prefix: prefix)
            #expect(status.state == .up)
            #expect(status.modems.map { $0.sim?.msisdn } == scenario.modems.map { $0.sim?.msisdn })
            #expect(status.modems.map(\.imei) == scenario.modems.map(\.imei))
        }
    }

    @Test func modemWithoutSIMHasNoSIMInTheWorld() throws {
        let scenario = try Scenario.decode(
            Array(#"{"modems": [{"sim": null}, {"sim": {"msisdn": "+447940448591"}}]}"#.utf8))
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            let modems = try SimulatedWorld.status(prefix: prefix).modems
            #expect(modems[0].sim == nil)
            #expect(modems[0].pin == nil)
            #expect(modems[0].registration == .deregistered)
            #expect(modems[1].sim?.msisdn == "+447940448591")
            // The modem itself says so to a client.
            let ready = try WorldFixture.output([
                "ip", "netns", "exec", prefix + "ue", "mbimcli", "-d", modems[0].controlPort,
                "--query-subscriber-ready-status"
            ])
            #expect(ready.stdout.contains("sim-not-inserted"), "\(ready.stdout)\(ready.stderr)")
        }
    }

    @Test func downStopsEveryProcessInTheWorldAndOnItsPorts() throws {
        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }
        let status = try WorldFixture.up(
            prefix: prefix,
            scenario: Scenario(modems: [
                SimulatedModem(index: 0),
                {
                    var m = SimulatedModem(index: 1); m.protocol = .qmi; return m
                }()
            ]))
        let ue = prefix + "ue"
        let mbimPort = status.modems[0].controlPort, qmiPort = status.modems[1].controlPort
        // mbimcli -p / qmicli -p on the device leave their proxies running in its namespace.
        let mbim = try WorldFixture.output([
            "ip", "netns", "exec", ue, "mbimcli", "-d", mbimPort, "-p", "--query-device-caps"
        ])
        #expect(mbim.status == 0, "\(mbim.stderr)")
        let qmi = try WorldFixture.output([
            "ip", "netns", "exec", ue, "qmicli", "-d", qmiPort, "-p", "--device-open-qmi", "--dms-get-ids"
        ])
        #expect(qmi.status == 0, "\(qmi.stderr)")
        // A background child of the device's shell, and a process on the host that holds a port.
        let background = try BackgroundProcess(["ip", "netns", "exec", ue, "sleep", "300"])
        let holder = try BackgroundProcess(["sh", "-c", "exec sleep 301 < \(mbimPort)"])
        let inWorld = try #require(waitForProcesses(in: ue, names: ["mbim-proxy", "qmi-proxy", "sleep"]))
        try #require(Poll.until(timeout: .seconds(10), interval: .milliseconds(50)) { holdsFile(holder.pid, mbimPort) })

        let report = try SimulatedWorld.down(prefix: prefix)
        let stopped = Dictionary(report.stoppedProcesses.map { ($0.pid, $0) }, uniquingKeysWith: { a, _ in a })
        for (pid, name) in inWorld {
            #expect(stopped[pid]?.reason == "in \(ue)", "\(name) \(pid): \(report.stoppedProcesses)")
            #expect(stopped[pid]?.name == name)
        }
        #expect(stopped[background.pid] != nil)
        #expect(stopped[holder.pid]?.reason == "holds cdc-wdm0", "\(report.stoppedProcesses)")
        #expect(background.wait(timeoutMs: 5000) && holder.wait(timeoutMs: 5000))
        for pid in inWorld.keys { #expect(processIsGone(pid), "pid \(pid) still runs") }
        // Nothing pins the deleted namespaces any more.
        #expect(!(try WorldFixture.output(["ip", "netns", "list"]).stdout.contains(prefix)))
        #expect(try SimulatedWorld.down(prefix: prefix).wasAlreadyDown)
    }

    /// Once the daemon is gone, the numbers of its ptys are free: a process that gets one (another
    /// test runner) is not the world's, though the marks were taken while the daemon held it.
    @Test func aHolderOfAFreedPortNumberIsNotTheWorlds() throws {
        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }
        let status = try WorldFixture.up(prefix: prefix)
        let daemon = try #require(status.daemonPID)
        var target = [CChar](repeating: 0, count: 64)
        try #require(readlink(status.modems[0].controlPort, &target, target.count - 1) > 0)
        let pts = String(cString: target)  // /dev/pts/N
        let marks = WorldProcesses.marks(namespaces: [], run: RunDirectory(prefix: prefix), daemon: daemon)
        #expect(Array(marks.ports.values) == ["cdc-wdm0"])
        kill(daemon, SIGKILL)
        var reaped: Int32 = 0
        _ = waitpid(daemon, &reaped, 0)
        // The lowest free number is given first: take ptys until one gets the port's.
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        var name = [CChar](repeating: 0, count: 64)
        var reused = false
        while held.count < 128, !reused {
            var master: Int32 = -1, slave: Int32 = -1
            guard cshims_pty_open(&master, &slave, &name, name.count) == 0 else { break }
            held += [master, slave]
            reused = String(cString: name) == pts
        }
        try #require(reused, "\(pts) was not free again")
        let holder = try BackgroundProcess(["sh", "-c", "exec sleep 305 < \(pts)"])
        try #require(Poll.until(timeout: .seconds(10), interval: .milliseconds(50)) { holdsFile(holder.pid, pts) })

        #expect(!WorldProcesses.find(marks).contains { $0.pid == holder.pid })
        let report = try SimulatedWorld.down(prefix: prefix)
        #expect(!report.stoppedProcesses.contains { $0.pid == holder.pid }, "\(report.stoppedProcesses)")
        #expect(!holder.wait(timeoutMs: 0), "the holder was stopped")
    }

    /// A process older than the world is never stopped for holding its port (a proxy that serves
    /// another world too, someone's shell).
    @Test func aProcessStartedBeforeTheWorldIsNotStoppedForHoldingItsPort() throws {
        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }
        let port = RunDirectory(prefix: prefix).devRoot + "/cdc-wdm0"
        let holder = try BackgroundProcess([
            "sh", "-c", "while [ ! -e \(port) ]; do sleep 0.05; done; exec sleep 306 < \(port)"
        ])
        _ = try WorldFixture.up(prefix: prefix)
        try #require(Poll.until(timeout: .seconds(10), interval: .milliseconds(50)) { holdsFile(holder.pid, port) })

        let report = try SimulatedWorld.down(prefix: prefix)
        #expect(!report.stoppedProcesses.contains { $0.pid == holder.pid }, "\(report.stoppedProcesses)")
        #expect(!holder.wait(timeoutMs: 0), "the holder was stopped")
    }

    @Test func downAfterAKilledDaemonStopsWhatRunsInItsNamespaces() throws {
        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }
        let status = try WorldFixture.up(prefix: prefix)
        let background = try BackgroundProcess(["ip", "netns", "exec", prefix + "ue", "sleep", "302"])
        _ = try #require(waitForProcesses(in: prefix + "ue", names: ["sleep"]))
        let daemon = try #require(status.daemonPID)
        kill(daemon, SIGKILL)
        var reaped: Int32 = 0
        _ = waitpid(daemon, &reaped, 0)
        let report = try SimulatedWorld.down(prefix: prefix)
        #expect(!report.stoppedDaemon)
        #expect(
            report.stoppedProcesses.contains { $0.pid == background.pid && $0.reason == "in \(prefix)ue" },
            "\(report.stoppedProcesses)")
        #expect(background.wait(timeoutMs: 5000))
        #expect(report.removedNamespaces.count == 3)
    }

    @Test func theDaemonStopsWhatRunsInItsNamespacesWhenItIsStopped() throws {
        let prefix = WorldFixture.uniquePrefix()
        defer { _ = try? SimulatedWorld.down(prefix: prefix) }
        let status = try WorldFixture.up(prefix: prefix)
        let background = try BackgroundProcess(["ip", "netns", "exec", prefix + "ue", "sleep", "304"])
        _ = try #require(waitForProcesses(in: prefix + "ue", names: ["sleep"]))
        // As Ctrl-C on `sim up --foreground` or a service manager's stop would.
        let daemon = try #require(status.daemonPID)
        kill(daemon, SIGTERM)
        var reaped: Int32 = 0
        _ = waitpid(daemon, &reaped, 0)
        #expect(background.wait(timeoutMs: 5000), "the sleep outlived the daemon")
        #expect(!(try WorldFixture.output(["ip", "netns", "list"]).stdout.contains(prefix)))
        let log = FileSystem.readText(RunDirectory(prefix: prefix).logFile) ?? ""
        #expect(log.contains("stopped sleep (pid \(background.pid), in \(prefix)ue)"), "\(log)")
    }

    /// The pids and names of processes whose network namespace is `namespace`, once every name
    /// in `names` is among them (within a generous 10 s); nil otherwise.
    private func waitForProcesses(in namespace: String, names: Set<String>) -> [Int32: String]? {
        var found: [Int32: String] = [:]
        let ok = Poll.until(timeout: .seconds(10), interval: .milliseconds(50)) {
            guard let listing = try? WorldFixture.output(["ip", "netns", "pids", namespace]) else { return false }
            found = [:]
            for line in listing.stdout.split(separator: "\n") {
                guard let pid = Int32(line) else { continue }
                found[pid] =
                    FileSystem.readText("/proc/\(pid)/comm")?.split(separator: "\n").first.map(String.init) ?? "?"
            }
            return names.isSubset(of: Set(found.values))
        }
        return ok ? found : nil
    }

    private func holdsFile(_ pid: Int32, _ path: String) -> Bool {
        var target = stat(), held = stat()
        guard stat(path, &target) == 0 else { return false }
        return stat("/proc/\(pid)/fd/0", &held) == 0 && held.st_rdev == target.st_rdev
    }
}
