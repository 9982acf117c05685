import CellpathCore
import FoundationEssentials
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// Lifecycle events through the daemon's control API in a real world: reset with
/// re-enumeration, SIM hot-swap, suspend/resume without ModemManager, reported DNS.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct LifecycleWorldTests {
    /// The SIM a swap inserts.
    static let newSIM = SIMIdentity(iccid: "8900101234567890997", imsi: "001010999999999", msisdn: "+447700900999")

    private func run(_ arguments: [String]) throws -> ProcessResult { try WorldFixture.output(arguments) }

    /// The ifindex of `device` in `namespace`, nil when it does not exist.
    private func ifindex(_ namespace: String, _ device: String) throws -> Int? {
        let r = try run(["ip", "-n", namespace, "-o", "link", "show", "dev", device])
        guard r.status == 0 else { return nil }
        return r.stdout.split(separator: ":").first.flatMap { Int($0) }
    }

    @Test func resetReEnumeratesUnderNewNamesWithANewNetDevice() throws {
        try WorldFixture.withWorld { prefix in
            let ue = prefix + "ue"
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            let before = try #require(try ifindex(ue, "wwan0"))
            let run = RunDirectory(prefix: prefix).path
            let status = try SimulatedWorld.lifecycle(.reset(renumber: true, slowMs: 0), prefix: prefix)
            #expect(status.modems[0].interface == "wwan1")
            #expect(status.modems[0].controlPort == "\(run)/dev/cdc-wdm1")
            #expect(status.modems[0].bearer == .disconnected)
            #expect(try ifindex(ue, "wwan0") == nil)
            let after = try #require(try ifindex(ue, "wwan1"))
            #expect(after != before)
            let link = try self.run(["ip", "-n", ue, "link", "show", "wwan1"]).stdout
            #expect(link.contains("POINTOPOINT") && link.contains("NOARP"), "\(link)")
            let old = try self.run(["mbimcli", "-d", "\(run)/dev/cdc-wdm0", "--query-device-caps"])
            #expect(old.status != 0)
            let new = try self.run(["mbimcli", "-d", "\(run)/dev/cdc-wdm1", "--query-device-caps"])
            #expect(new.status == 0, "\(new.stderr)")
            #expect(FileSystemProbe.exists("\(run)/sys/class/net/wwan1"))
            #expect(!FileSystemProbe.exists("\(run)/sys/class/net/wwan0"))
            // The new device carries the bearer again.
            let again = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            #expect(again.modems[0].address == "100.64.23.10")
            #expect(try self.run(["ip", "-n", ue, "-4", "addr", "show", "wwan1"]).stdout.contains("100.64.23.10/32"))
        }
    }

    @Test func aSwappedSIMIsTheOneTheCarrierIdentifies() throws {
        try WorldFixture.withWorld { prefix in
            let walk = try CheckWalk(prefix: prefix)
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            #expect(try walk.matches("+447940448591") == true)
            let status = try SimulatedWorld.lifecycle(.swapSIM(Self.newSIM), prefix: prefix)
            #expect(status.modems[0].sim == Self.newSIM)
            #expect(status.modems[0].bearer == .disconnected)
            let ready = try run(["mbimcli", "-d", status.modems[0].controlPort, "--query-subscriber-ready-status"])
            #expect(ready.stdout.contains(Self.newSIM.iccid), "\(ready.stdout)")
            _ = try SimulatedWorld.bearer(connect: true, modem: 0, prefix: prefix)
            #expect(try walk.matches("+447700900999") == true)
            #expect(try walk.matches("+447940448591") == false)
            let removed = try SimulatedWorld.lifecycle(.removeSIM, prefix: prefix)
            #expect(removed.modems[0].sim == nil)
            let none = try run(["mbimcli", "-d", status.modems[0].controlPort, "--query-subscriber-ready-status"])
            #expect(none.stdout.contains("sim-not-inserted"), "\(none.stdout)")
        }
    }

    @Test func suspendDropsTheBearerWithoutModemManager() throws {
        try WorldFixture.withWorld { prefix in
            let port = try SimulatedWorld.status(prefix: prefix).modems[0].controlPort
            let connect = try run(["mbimcli", "-d", port, "--connect=apn=internet", "--no-close"])
            #expect(connect.status == 0, "\(connect.stderr)")
            let trid = try #require(field("TRID", in: connect.stdout))
            #expect(try SimulatedWorld.status(prefix: prefix).modems[0].bearer == .connected)
            let asleep = try SimulatedWorld.lifecycle(.suspend, prefix: prefix)
            #expect(asleep.modems[0].bearer == .disconnected)
            #expect(throws: CellpathError.self) { try SimulatedWorld.lifecycle(.suspend, prefix: prefix) }
            _ = try SimulatedWorld.lifecycle(.resume, prefix: prefix)
            let state = try run(["mbimcli", "-d", port, "--query-connection-state", "--no-open=\(trid)"])
            #expect(state.stdout.contains("deactivated"), "\(state.stdout)")
            #expect(throws: CellpathError.self) { try SimulatedWorld.lifecycle(.resume, prefix: prefix) }
        }
    }

    @Test func scenarioEventsFireAtTheirTime() throws {
        var scenario = Scenario.builtIn
        var reset = ScenarioEvent(atSeconds: 1, event: .reset)
        reset.renumber = true
        var swap = ScenarioEvent(atSeconds: 2, event: .swapSIM)
        swap.sim = SimulatedSIM(iccid: Self.newSIM.iccid, imsi: Self.newSIM.imsi, msisdn: Self.newSIM.msisdn)
        scenario.events = [swap, reset]
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            var status = try SimulatedWorld.status(prefix: prefix)
            for _ in 0 ..< 50 where status.modems[0].sim != Self.newSIM {
                usleep(100_000)
                status = try SimulatedWorld.status(prefix: prefix)
            }
            #expect(status.modems[0].interface == "wwan1")
            #expect(status.modems[0].sim == Self.newSIM)
            let log = FileSystem.readText(RunDirectory(prefix: prefix).logFile) ?? ""
            let lines = log.split(separator: "\n")
            let resetLine = lines.firstIndex { $0.contains("scenario event at 1 s: reset") }
            let swapLine = lines.firstIndex { $0.contains("scenario event at 2 s: swapSIM") }
            #expect(resetLine != nil && swapLine != nil && resetLine! < swapLine!, "\(log)")
        }
    }

    @Test func reportedDNSIsAControlOperation() throws {
        var scenario = Scenario.builtIn
        scenario.modems[0].protocol = .qmi
        try WorldFixture.withWorld(scenario: scenario) { prefix in
            let port = try SimulatedWorld.status(prefix: prefix).modems[0].controlPort
            let start = try run([
                "qmicli", "-d", port, "--device-open-qmi",
                "--wds-start-network=apn=internet,ip-type=4",
                "--client-no-release-cid"
            ])
            #expect(start.status == 0, "\(start.stderr)")
            let cid = try #require(field("CID", in: start.stdout))
            _ = try SimulatedWorld.lifecycle(.reportDNS(["0.0.0.0", "::"]), prefix: prefix)
            let settings = try run([
                "qmicli", "-d", port, "--device-open-qmi", "--wds-get-current-settings",
                "--client-cid=\(cid)", "--client-no-release-cid"
            ])
            #expect(field("IPv4 primary DNS", in: settings.stdout) == "0.0.0.0", "\(settings.stdout)")
            #expect(throws: CellpathError.self) {
                try SimulatedWorld.lifecycle(.reportDNS(["dns.example"]), prefix: prefix)
            }
            #expect(throws: CellpathError.self) { try SimulatedWorld.lifecycle(.reset(), modem: 3, prefix: prefix) }
        }
    }
}

/// The value of the line `label: 'value'` in qmicli output.
private func field(_ label: String, in output: String) -> String? {
    output.split(separator: "\n").lazy.map { $0.trimmingPrefix(while: { $0 == " " || $0 == "\t" }) }
        .first { $0.hasPrefix(label + ":") }
        .map { String($0.dropFirst(label.count + 1).filter { $0 != " " && $0 != "'" }) }
}

/// `path` exists (links not followed).
enum FileSystemProbe {
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}

/// A SubscriberCheck v0.2 walked through a modem's bearer with curl, as the docs' walk-through does.
struct CheckWalk {
    let prefix: String
    let environment: [String: String]
    let token: String

    init(prefix: String) throws {
        self.prefix = prefix
        var env = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        for (name, value) in try SimulatedWorld.environment(prefix: prefix) { env[name] = value }
        environment = env
        let id = try #require(env["CELLPATH_CLIENT_ID"]), secret = try #require(env["CELLPATH_CLIENT_SECRET"])
        let answer = try Self.curl(
            prefix, env,
            [
                "-u", "\(id):\(secret)", "-d",
                "grant_type=client_credentials&scope=subscriber_check",
                "https://api.truid.test/oauth2/v1/token"
            ])
        token = try #require(answer["access_token"]?.string)
    }

    /// Whether the SIM behind `interface` has `number`, as the completed check says.
    func matches(_ number: String, interface: String = "wwan0") throws -> Bool? {
        let auth = ["-H", "Authorization: Bearer \(token)"]
        let check = try Self.curl(
            prefix, environment,
            auth + [
                "-H", "Content-Type: application/json",
                "-d", #"{"phone_number":"\#(number)"}"#,
                "https://api.truid.test/subscriber_check/v0.2/checks"
            ])
        let id = try #require(check["check_id"]?.string)
        let url = try #require(check["_links"]?["check_url"]?["href"]?.string)
        let result = try Self.curl(
            prefix, environment,
            [
                "-L", "--interface", interface,
                "--resolve", "api.truid.test:443:203.0.113.10",
                "--resolve", "mno.carrier.test:80:100.64.0.1", url
            ])
        let code = try #require(result["code"]?.string, "\(result)")
        let patched = try Self.curl(
            prefix, environment,
            auth + [
                "-X", "PATCH",
                "-H", "Content-Type: application/json-patch+json",
                "-d", #"[{"op":"add","path":"/code","value":"\#(code)"}]"#,
                "https://api.truid.test/subscriber_check/v0.2/checks/\(id)"
            ])
        return patched["match"]?.bool
    }

    private static func curl(
        _ prefix: String, _ env: [String: String],
        _ arguments: [String]
    ) throws -> [String: JSONValue] {
        let result = try ProcessRunner.run(
            [
                "ip", "netns", "exec", prefix + "ue", "curl", "-sS", "--max-time", "10",
                "--cacert", env["CELLPATH_CA_FILE"] ?? ""
            ] + arguments, environment: env)
        #expect(result.status == 0, "curl \(arguments): \(result.stderr)")
        return try JSONDecoder().decode([String: JSONValue].self, from: Data(result.stdout.utf8))
    }
}
