import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// The check commands when something goes wrong: the check expires before the bearer is up,
/// the token expires between runs, the API answers badly, the bearer drops mid-chain, the modem
/// has no SIM, Ctrl-C at each step. Each gives its documented exit code, opens check_url at
/// most once, and leaves no bearer, address or rule behind.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct CheckFaultsEndToEndTests {
    /// The requests the fake API and the carrier saw since `mark`.
    private func requests(_ device: SimulatedDevice, since mark: Int) throws -> [JSONValue] {
        Array(try device.requestLog().dropFirst(mark))
    }

    private func expectNothingLeft(
        _ device: SimulatedDevice, modem: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(
            try device.status()["modems"]?.array?[modem]["bearer"]?.string == "disconnected",
            sourceLocation: sourceLocation)
        #expect(
            try device.run(["ip", "-4", "addr", "show", "dev", "wwan\(modem)"]).stdout.contains("inet ") == false,
            sourceLocation: sourceLocation)
        #expect(try device.run(["ip", "rule"]).stdout.contains("100.64.23.1") == false, sourceLocation: sourceLocation)
    }

    /// A modem that answers slowly: its bearer comes up after the check's 1 s TTL. The check is
    /// reported expired (65) and its check_url never opened.
    @Test func aCheckThatExpiresBeforeTheBearerIsUpIsNeverOpened() throws {
        var scenario = Scenario.builtIn
        scenario.api.checkTTLSeconds = 1
        scenario.modems[0].faults.responseDelayMs = 300
        try SimulatedDevice.with(scenario, connect: false) { device in
            let mark = try device.requestLog().count
            let result = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            #expect(result.status == 65, "\(result.stderr)")
            #expect(
                try JSONValue.parse(result.stdout)["error"]?["message"]?.string?.contains("expired") == true,
                "\(result.stdout)")
            #expect(
                try requests(device, since: mark).allSatisfy { $0["path"]?.string?.contains("/redirect") != true },
                "check_url was opened")
            try expectNothingLeft(device)
        }
    }

    /// A token cached in the world's token cache lives 62 s, of which cellpath trusts all but the
    /// last 60: the second run, 3 s later, fetches a new token instead of sending the stale one.
    @Test func aTokenThatExpiredBetweenRunsIsFetchedAgain() throws {
        var scenario = Scenario.builtIn
        scenario.api.tokenLifetimeSeconds = 62
        try SimulatedDevice.with(scenario, connect: false) { device in
            let mark = try device.requestLog().count
            func check() throws -> ProcessResult {
                try device.cellpath(["sim-check", "+447940448591", "--direct"])
            }
            #expect(try check().status == 0)
            let cache = try #require(try device.environment()["CELLPATH_TOKEN_CACHE"])
            var info = stat()
            #expect(stat(cache, &info) == 0 && info.st_mode & 0o777 == 0o600, "the token cache is the user's alone")
            #expect(try check().status == 0, "a run within the token's life")
            sleep(3)
            let late = try check()
            #expect(late.status == 0, "\(late.stderr)")
            let log = try requests(device, since: mark)
            #expect(log.filter { $0["path"]?.string == "/oauth2/v1/token" }.count == 2, "\(log)")
            #expect(!log.contains { $0["status"] == .int(401) }, "a stale token was sent: \(log)")
        }
    }

    @Test(arguments: [
        ("malformed JSON on create", #"{"api": {"malformedJSON": true}}"#, Int32(76)),
        ("429 on every create", #"{"api": {"rateLimitRetryAfter": 1}}"#, Int32(75))
    ])
    func theAPIAnsweringBadlyHasItsExitCodeAndNoBearerStays(
        _ name: String, _ scenarioJSON: String, _ code: Int32
    ) throws {
        let scenario = try Scenario.decode(Array(scenarioJSON.utf8))
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            #expect(result.status == code, "\(name): \(result.stderr)")
            #expect(try JSONValue.parse(result.stdout)["error"]?["step"]?.string == "create", "\(result.stdout)")
            try expectNothingLeft(device)
        }
    }

    /// The carrier never answers and the network drops the bearer meanwhile: the check fails
    /// closed at once (69), check_url was opened once, and nothing stays.
    @Test func aBearerDroppedMidChainFailsClosedWithoutASecondVisit() throws {
        var scenario = Scenario.builtIn
        scenario.modems[0].faults.dropBearerAfterSeconds = 1
        scenario.carrier.timeout = true
        try SimulatedDevice.with(scenario, connect: false) { device in
            let mark = try device.requestLog().count
            let result = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            #expect(result.status == 69, "\(result.stderr)")
            // The dropped bearer's addressing is removed at once: the engine sees the interface or the address go.
            #expect(
                ["interfaceDown", "addressGone"].contains(
                    try JSONValue.parse(result.stdout)["error"]?["reason"]?.string ?? ""),
                "\(result.stdout)")
            let visits = try requests(device, since: mark).filter { $0["path"]?.string?.contains("/redirect") == true }
            #expect(visits.count == 1, "\(visits)")
            #expect(visits.allSatisfy { $0["source"]?.string == "100.64.23.10" })
            try expectNothingLeft(device)
        }
    }

    @Test func aModemWithoutASIMIsUnavailable() throws {
        let scenario = try Scenario.decode(Array(#"{"modems": [{"sim": null}]}"#.utf8))
        try SimulatedDevice.with(scenario, connect: false) { device in
            let given = try device.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct"])
            #expect(given.status == 69, "\(given.stderr)")
            #expect(given.stderr.lowercased().contains("sim"), "\(given.stderr)")
            let own = try device.cellpath(["subscriber-check", "-m", "0", "--direct"])
            #expect(own.status == 64, "no SIM, no number of its own: \(own.stderr)")
            try expectNothingLeft(device)
        }
    }

    /// SIGINT while the bearer comes up, while the check is created, while check_url is open,
    /// and while the result is read: 130 every time, and nothing left behind.
    @Test(arguments: [0.3, 1.2, 2.4, 3.4])
    func ctrlCAtEachStepLeavesNothingBehind(_ after: Double) throws {
        var scenario = Scenario.builtIn
        scenario.api.slowMs = 1000
        scenario.modems[0].faults.responseDelayMs = 40
        try SimulatedDevice.with(scenario, connect: false) { device in
            let result = try ProcessRunner.run(
                [
                    CellpathBinary.path, "sim", "exec", "--prefix", device.prefix, "--", CellpathBinary.path,
                    "subscriber-check", "+447940448591", "-m", "0", "--direct", "-v"
                ],
                environment: [
                    "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
                    "CELLPATH_SYSTEM_CONFIG": "/nonexistent/cellpath.conf"
                ],
                signals: [(after: after, signal: SIGINT)])
            #expect(result.status == 130, "SIGINT after \(after) s: \(result.stderr)")
            try expectNothingLeft(device)
        }
    }
}
