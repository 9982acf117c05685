import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// The main job, a SubscriberCheck, on every profile of the zoo (scripts/zoo-scenario.json) in
/// one world, as a field engineer runs it on a rack of test modems: `subscriber-check -m all`
/// names the lock and its remedy on each FCC-locked modem and verifies the others; once those
/// are unlocked, it verifies every modem cellpath can drive, all at once; the router-mode modem verifies through its interface and
/// the DNS server of its DHCP lease; the L850 is refused with its reason. Every request of a
/// check_url chain comes from a bearer address, no bearer packet is seen on Wi-Fi, and the
/// device's network is as it was after success, after failure and after Ctrl-C.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct DeviceZooJobsEndToEndTests {
    @Test func theMainJobOnEveryProfile() throws {
        let scenario = try Scenario.load(path: Repository.root + "/scripts/zoo-scenario.json")
        try SimulatedDevice.with(scenario, connect: false) { device in
            let listed = try Self.modems(device)
            let driven = listed.filter { $0["supported"] == .bool(true) && $0["mode"]?.string == "modem" }
            let fccLocked = Set(
                scenario.modems.enumerated().filter { $0.element.profile.fccLocked }.map { $0.element.imei })
            let network = try Self.network(device)

            // Before any unlock, all at once: each FCC-locked modem's run fails with the lock
            // named, every other modem verifies. Traced: a lane that ends early closes its modem
            // while the others open sockets and write records, and no close is of a descriptor
            // closed already (which could have been another lane's).
            var mark = try device.requestLog().count
            #expect(fccLocked.count == 3, "the EM7455, the FM350 and the L860")
            let locked = try CellpathBinary.run(
                ["sim", "exec", "--prefix", device.prefix, "--"] + FailedCloses.tracer + [
                    CellpathBinary.path, "subscriber-check", "-m", "all", "--direct", "--json"
                ])
            #expect(locked.status == 69, "\(locked.stderr)")
            #expect(FailedCloses.ofClosedDescriptors(in: locked.stderr).isEmpty, "\(locked.stderr)")
            let lockedRuns = try Self.runs(locked.stdout)
            #expect(lockedRuns.count == driven.count, "\(locked.stdout)")
            for modem in driven {
                let index = try #require(modem["index"]?.int)
                let run = try #require(lockedRuns[index], "modem \(index): \(locked.stdout)")
                guard fccLocked.contains(modem["imei"]?.string ?? "") else {
                    #expect(run["outcome"]?.string == "verified", "modem \(index): \(run)")
                    continue
                }
                #expect(run["outcome"] == .null, "modem \(index): \(run)")
                #expect(run["error"]?.string?.contains("is FCC-locked") == true, "modem \(index): \(run)")
            }
            #expect(locked.stderr.contains("unlock"), "the remedy: \(locked.stderr)")
            try Self.expectChainsOverBearers(device, since: mark)
            try Self.expectUnchanged(network, device)

            // Unlocked, as ModemManager's unlock scripts would: every modem verifies.
            for (n, modem) in scenario.modems.enumerated() where modem.profile.fccLocked {
                try device.sim("modem", "unlock-fcc", "--modem", "\(n)")
            }
            mark = try device.requestLog().count
            let (all, allPackets) = try device.capture(on: ["wlan0"]) {
                try device.cellpath(["subscriber-check", "-m", "all", "--direct", "--json"])
            }
            #expect(all.status == 0, "\(all.stderr)")
            let runs = try Self.runs(all.stdout)
            #expect(runs.count == driven.count && runs.values.allSatisfy { $0["outcome"]?.string == "verified" })
            try Self.expectChainsOverBearers(device, since: mark)
            #expect(Self.bearerPackets(allPackets["wlan0"] ?? []) == [], "bearer traffic on Wi-Fi")
            try Self.expectUnchanged(network, device)

            // Ctrl-C while the modems' bearers come up and their checks run.
            let interrupted = try ProcessRunner.run(
                [
                    "timeout", "--preserve-status", "-s", "INT", "0.7", CellpathBinary.path, "sim", "exec",
                    "--prefix", device.prefix, "--", CellpathBinary.path, "subscriber-check", "-m", "all", "--direct"
                ],
                environment: SimulatedDevice.path)
            #expect(interrupted.status == 130, "\(interrupted.stderr)")
            try Self.expectUnchanged(network, device)

            try Self.checkTheRouterModeModem(device, scenario, listed)
            try Self.checkTheUnsupportedModem(device, scenario)
        }
    }

    /// The router-mode modem: its DHCP lease configures its interface as a DHCP client does
    /// (address, a default route of a higher metric than Wi-Fi's, the DNS server noted); a
    /// check through `--interface` and that DNS server verifies its SIM's number and says that
    /// the modem's state is not available.
    static func checkTheRouterModeModem(
        _ device: SimulatedDevice, _ scenario: Scenario, _ listed: [JSONValue]
    ) throws {
        let routerModem = try #require(scenario.modems.first { $0.device == .routerMode })
        let router = try #require(listed.first { $0["mode"]?.string == "router" })
        let interface = try #require(router["interface"]?.string)
        let directory = try TemporaryDirectory.make("cellpath-zoo-dhcp")
        defer { FileSystem.removeTree(directory) }
        let script = "\(directory)/lease.sh", lease = "\(directory)/dns"
        try FileSystem.write(
            """
            #!/bin/sh
            [ "$1" = bound ] || exit 0
            ip addr add "$ip/$mask" dev "$interface"
            ip route add default via "$router" dev "$interface" metric 700
            echo "$dns" > \(lease)

            """, to: script, mode: 0o700)
        #expect(try device.run(["ip", "link", "set", interface, "up"]).status == 0)
        let dhcp = try device.run(["udhcpc", "-i", interface, "-n", "-q", "-t", "5", "-s", script])
        #expect(dhcp.status == 0, "\(dhcp.stderr)")
        let dns = try #require(FileSystem.readText(lease)?.split(whereSeparator: \.isWhitespace).first.map(String.init))
        let mark = try device.requestLog().count
        let check = try device.cellpath([
            "subscriber-check", try #require(routerModem.sim?.msisdn), "--direct", "--interface", interface, "--dns",
            dns, "--json"
        ])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(
            check.stderr.contains("\(interface) is modem \(try #require(router["index"]?.int))'s, a router-mode modem")
                && check.stderr.contains("its SIM, operator and signal cannot be read"), "\(check.stderr)")
        let result = try JSONValue.parse(check.stdout)
        #expect(result["outcome"]?.string == "verified", "\(check.stdout)")
        #expect(result["path"]?["interface"]?.string == interface)
        let chain = try Array(device.requestLog().dropFirst(mark)).filter(Self.isCheckURLRequest)
        #expect(!chain.isEmpty)
        // The router modem's own bearer carries them (the carrier sees its address), not Wi-Fi.
        for entry in chain { #expect(entry["source"]?.string?.hasPrefix("100.64.") == true, "\(entry)") }
    }

    /// The L850 (XMM RPC and AT ports only): a check naming it is refused with its reason, exit 69.
    static func checkTheUnsupportedModem(_ device: SimulatedDevice, _ scenario: Scenario) throws {
        let n = try #require(scenario.modems.firstIndex { $0.device == .pcieIOSMUnsupported })
        let refused = try device.cellpath(["subscriber-check", "-m", "wwan\(n)xmmrpc0", "--direct"])
        #expect(refused.status == 69, "\(refused.stderr)")
        #expect(refused.stderr.contains("exposes only XMM RPC and AT ports"), "\(refused.stderr)")
    }

    /// `cellpath modems --json`, in full.
    static func modems(_ device: SimulatedDevice) throws -> [JSONValue] {
        let result = try device.cellpath(["modems", "--json", "--verbose-full"])
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONValue.parse(result.stdout)["modems"]?.array)
    }

    /// The runs of a `-m all --json` output by modem index (the last line is the summary).
    static func runs(_ output: String) throws -> [Int: JSONValue] {
        var runs: [Int: JSONValue] = [:]
        for line in output.split(separator: "\n").dropLast() {
            let run = try JSONValue.parse(String(line))
            runs[try #require(run["modem"]?.int)] = run
        }
        return runs
    }

    /// The requests of check_url chains: the API's redirect and callback, the carrier's identify.
    static func isCheckURLRequest(_ entry: JSONValue) -> Bool {
        let path = entry["path"]?.string ?? ""
        return path.hasSuffix("/redirect") || path.contains("/callback") || path.contains("/identify/")
    }

    /// Every check_url request since `mark` came from a bearer's address, never from Wi-Fi's.
    static func expectChainsOverBearers(_ device: SimulatedDevice, since mark: Int) throws {
        let chain = try Array(device.requestLog().dropFirst(mark)).filter(isCheckURLRequest)
        #expect(!chain.isEmpty)
        for entry in chain {
            let source = entry["source"]?.string ?? ""
            #expect(source.hasPrefix("100.64.") || source.hasPrefix("2001:db8:64:"), "\(entry)")
        }
    }

    /// Captured packets that carry a bearer's address (100.64.0.0/16, 2001:db8:64::/48).
    static func bearerPackets(_ lines: [String]) -> [String] {
        lines.filter { $0.contains(" 100.64.") || $0.contains(" 2001:db8:64:") }
    }

    /// The device's network is as `before`: what was added and what went are named.
    static func expectUnchanged(
        _ before: [String], _ device: SimulatedDevice, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        // The simulated kernel acts on sysfs writes (qmi/del_mux) a moment later than a real one.
        var after = try network(device)
        _ = try Poll.until(timeout: .seconds(10), interval: .milliseconds(100)) {
            after = try network(device)
            return after == before
        }
        let added = after.filter { !before.contains($0) }, gone = before.filter { !after.contains($0) }
        #expect(added == [] && gone == [], "added: \(added), gone: \(gone)", sourceLocation: sourceLocation)
    }

    /// What cellpath may change in the device's namespace: links, addresses, rules and routes
    /// of both families, and the bearer records.
    static func network(_ device: SimulatedDevice) throws -> [String] {
        var state: [String] = []
        for command in [
            ["ip", "-br", "link"], ["ip", "-br", "addr"], ["ip", "rule"], ["ip", "-6", "rule"],
            ["ip", "route", "show", "table", "all"], ["ip", "-6", "route", "show", "table", "all"]
        ] {
            state += try device.run(command).stdout.split(separator: "\n").map { "\(command.last!): \($0)" }
        }
        let records = try #require(try device.environment()["CELLPATH_STATE_DIR"])
        state += (FileSystem.entries(records) ?? []).filter { !$0.hasSuffix(".lock") }.map { "record: \($0)" }
        return state
    }
}
