import CellpathCore
import Glibc
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

@testable import Simulator

/// A simulated qmi_wwan mux device vanishes when `del_mux` is handled, as the kernel's does
/// before the write returns: `bearer down` then `bearer up` at once (a timer beside a person)
/// gets the same name again.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
struct PacketRelayMuxTests {
    @Test func aRemovedMuxDeviceIsGoneWhenRemovalReturns() throws {
        let namespace = "cptest-mux-\(getpid())-\(UInt32.random(in: 0 ... UInt32.max))"
        #expect(try ProcessRunner.run(["ip", "netns", "add", namespace]).status == 0)
        defer { _ = try? ProcessRunner.run(["ip", "netns", "delete", namespace]) }
        let relay = PacketRelay(
            name: "mux-test", deviceFD: try openTUN(namespace: namespace, name: "wwan0"),
            networkFD: try openTUN(namespace: namespace, name: "pgw0"), conditions: LinkConditions(), open: true)
        try relay.start()
        defer { relay.stop() }
        for round in 0 ..< 5 {
            relay.addMuxDevice("qmimux0", fd: try openTUN(namespace: namespace, name: "qmimux0"))
            // Give the uplink thread a turn with the device in its poll set, as a bearer has.
            usleep(20_000)
            relay.removeMuxDevice("qmimux0")
            let links = try ProcessRunner.run(["ip", "-n", namespace, "-o", "link", "show"]).stdout
            #expect(!links.contains("qmimux0"), "round \(round): \(links)")
        }
        #expect(relay.muxDeviceNames.isEmpty)
    }
}
