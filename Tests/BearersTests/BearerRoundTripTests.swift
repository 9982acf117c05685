import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// How many times `bearer up` and `bearer down` wait for the modem (the round trips that the
/// benchmarks count, docs/benchmarks.md), so that one more cannot come in unseen; and QMI's
/// requests sent together (client allocations, the two calls of a dual-stack bearer) interrupted
/// or refused halfway leave nothing behind. Root, as `BearerCommandTests`.
@Suite(
    .timeLimit(.minutes(10)), .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)),
    .ownThreads(.worlds))
struct BearerRoundTripTests {
    /// Round trips to the modem in a `-v` trace: bursts of requests sent with no answer read in
    /// between (the simulated modem answers what it has read after one delay), counted as
    /// scripts/bench-bearer.sh counts them.
    static func roundTrips(_ trace: String) -> Int {
        var bursts = 0, sending = false
        for line in trace.split(separator: "\n") {
            if line.hasSuffix("] sent message...") {
                if !sending { bursts += 1 }
                sending = true
            } else if line.hasSuffix("] received message...") {
                sending = false
            }
        }
        return bursts
    }

    /// A modem answering after 150 ms (long enough that requests sent together stay one burst
    /// on a loaded machine) on a network of `network`.
    static func slowModem(
        _ kind: SimulatorScenario.ModemProtocol, network: BearerIPType = .ipv4
    ) throws -> (SimulatedFleet, DeviceNamespace) {
        var faults = ModemFaults()
        faults.responseDelayMs = 150
        return (try SimulatedFleet([.test(kind, 1, faults: faults, ipType: network)]), try DeviceNamespace())
    }

    /// MBIM: OPEN; the first reads; connect; the IP configuration. QMI: the client IDs (with
    /// WDA's and the IPv6 client's); the first reads with Get Data Format and Set IP Family;
    /// Set Data Format (the simulated kernel offers QMAP, the firmware keeps its format); both
    /// calls with the check clients' release; the settings (with the refused IPv6 client's
    /// release on an IPv4 network). `bearer down`: OPEN or Stop Network, then disconnect or
    /// the release of the call's client.
    @Test(arguments: [
        (SimulatorScenario.ModemProtocol.mbim, BearerIPType.ipv4, 4), (.mbim, .ipv4v6, 4), (.qmi, .ipv4, 5),
        (.qmi, .ipv4v6, 5)
    ])
    func upAndDownWaitForTheModemAFixedNumberOfTimes(
        _ kind: SimulatorScenario.ModemProtocol, _ network: BearerIPType, _ upTrips: Int
    ) throws {
        let (fleet, namespace) = try Self.slowModem(kind, network: network)
        let up = try BearerCommandTests.bearer(namespace, fleet, ["up", "-v"])
        #expect(up.status == 0, "\(up.stderr)")
        #expect(Self.roundTrips(up.stderr) == upTrips, "\(up.stderr)")
        if kind == .qmi {
            #expect(
                eventually { fleet.device(0).allocatedQMIClientIDs == (network == .ipv4v6 ? 2 : 1) },
                "only the calls' clients stay allocated")
        }
        let down = try BearerCommandTests.bearer(namespace, fleet, ["down", "-v"])
        #expect(down.status == 0, "\(down.stderr)")
        #expect(Self.roundTrips(down.stderr) == 2, "\(down.stderr)")
        try BearerCommandTests.expectNothingLeft(namespace, fleet)
    }

    /// Ctrl-C while QMI's two calls start together (on a dual-stack network both succeed):
    /// both are stopped, every client ID is released, and nothing is left on the interface or
    /// in the records.
    @Test func ctrlCWhileBothCallsStartLeavesNothingBehind() throws {
        let (fleet, namespace) = try Self.slowModem(.qmi, network: .ipv4v6)
        let output = "\(namespace.stateDirectory)-out"
        defer { unlink(output) }
        let up = try namespace.start(["bearer", "up", "--no-proxy", "-v", "--timeout", "60"], fleet, output: output)
        #expect(waitForText(#""Start Network""#, in: output))
        kill(up.pid, SIGINT)
        #expect(up.wait(timeoutMs: 30_000))
        let log = FileSystem.readText(output) ?? ""
        #expect(up.exitStatus == 130, "\(log)")
        #expect(log.contains("error: cancelled while "), "\(log)")
        #expect(log.contains("undone: the bearer is disconnected"), "both calls were up, and are stopped: \(log)")
        try BearerCommandTests.expectNothingLeft(namespace, fleet, "\(log)")
    }

    /// Both calls refused by the network: the bring-up fails with the network's cause, and the
    /// clients allocated with the others (WDA, IPv6) are released too.
    @Test func bothCallsRefusedReleaseEveryClientID() throws {
        var faults = ModemFaults()
        faults.responseDelayMs = 20
        faults.connectRejectCode = 33
        let fleet = try SimulatedFleet([.test(.qmi, 1, faults: faults, ipType: .ipv4v6)])
        let namespace = try DeviceNamespace()
        let up = try BearerCommandTests.bearer(namespace, fleet, ["up", "-v"])
        #expect(up.status == 69, "\(up.stderr)")
        #expect(up.stderr.contains("(3GPP cause 33)"), "\(up.stderr)")
        #expect(up.stderr.contains("WDA client ID") && up.stderr.contains("allocated for IPv6"), "\(up.stderr)")
        try BearerCommandTests.expectNothingLeft(namespace, fleet, "\(up.stderr)")
    }
}
