import CellpathCore
import SimulatorScenario
import TestSupport
import Testing

/// A check on a bearer that cellpath's record says is up (`bearer up` before it): its chain
/// starts at once on the recorded path while the modem is asked beside it; a record the modem
/// contradicts (the network dropped the bearer while nobody followed the modem) fails the check
/// closed, with nothing sent over Wi-Fi.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct RecordedBearerEndToEndTests {
    private static let check = ["subscriber-check", "+447940448591", "-m", "0", "--direct", "-v", "--json"]

    /// The line index in `stderr` of the first line that contains `text`.
    private func line(_ text: String, in stderr: String) -> Int? {
        stderr.split(separator: "\n").firstIndex { $0.contains(text) }
    }

    /// The modem answers in 200 ms: a chain that waited for it would open check_url after the
    /// modem was opened and had confirmed the bearer; on the recorded bearer it opens first.
    @Test func aCheckOnABearerUpAsRecordedStartsItsChainBeforeTheModemIsAsked() throws {
        var scenario = Scenario.builtIn
        scenario.modems[0].faults.responseDelayMs = 200
        try SimulatedDevice.with(scenario, connect: false) { device in
            let up = try device.cellpath(["bearer", "up", "-m", "0", "-q"])
            #expect(up.status == 0, "\(up.stderr)")
            let result = try device.cellpath(Self.check)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try JSONValue.parse(result.stdout)["outcome"]?.string == "verified", "\(result.stdout)")
            let started = line("the check starts on it now", in: result.stderr)
            let chain = line("opening check_url through wwan0", in: result.stderr)
            let opened = line("through the MBIM port", in: result.stderr)
            let confirmed = line("modem 0 confirms its bearer is up", in: result.stderr)
            #expect(started != nil && chain != nil && opened != nil && confirmed != nil, "\(result.stderr)")
            if let started, let chain, let opened, let confirmed {
                #expect(started < chain && chain < opened && opened < confirmed, "\(result.stderr)")
            }
            #expect(try device.cellpath(["bearer", "down", "-m", "0", "-q"]).status == 0)
        }
    }

    /// `bearer up`, then the network drops the bearer while no cellpath process follows the
    /// modem: the record and the interface still say it is up. The check starts on it, the
    /// modem says it is gone, and the check fails with the dropped bearer (69), nothing of it
    /// on Wi-Fi; the dead bearer's address is gone from the interface, so the next check asks
    /// the modem first.
    @Test func aCheckOnAStaleRecordFailsClosedWithoutWiFi() throws {
        var scenario = Scenario.builtIn
        scenario.modems[0].faults.dropBearerAfterSeconds = 2
        try SimulatedDevice.with(scenario, connect: false) { device in
            let up = try device.cellpath(["bearer", "up", "-m", "0", "-q"])
            #expect(up.status == 0, "\(up.stderr)")
            let dropped = try Poll.until(timeout: .seconds(10)) {
                try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected"
            }
            #expect(dropped, "the network did not drop the bearer")
            #expect(
                try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("100.64.23.10"),
                "the interface no longer holds the recorded address: the record would not be taken")
            let mark = try device.requestLog().count
            let (result, packets) = try device.capture(
                on: ["wlan0"], filter: ["net", "100.64.0.0/16", "or", "net", "2001:db8:64::/48"]
            ) { try device.cellpath(Self.check) }
            #expect(result.status == 69, "\(result.stderr)")
            #expect(line("the check starts on it now", in: result.stderr) != nil, "\(result.stderr)")
            let error = try JSONValue.parse(result.stdout)["error"]
            #expect(
                error?["message"]?.string?.contains("dropped modem 0's bearer") == true, "\(result.stdout)")
            #expect(packets["wlan0"] == [], "the check's packets on Wi-Fi: \(packets["wlan0"] ?? [])")
            // The device leg: the carrier's requests, and check_url's redirect and callback.
            let overWiFi = Array(try device.requestLog().dropFirst(mark)).filter { entry in
                let path = entry["path"]?.string ?? "", source = entry["source"]?.string ?? ""
                let deviceLeg =
                    entry["namespace"]?.string?.hasSuffix("carrier") == true || path.contains("/redirect")
                    || path.contains("/callback")
                return deviceLeg && (source.hasPrefix("192.0.2.") || source.hasPrefix("2001:db8:2::"))
            }
            #expect(overWiFi.isEmpty, "device-leg requests from Wi-Fi: \(overWiFi)")
            #expect(
                try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("100.64.23.10") == false,
                "the dead bearer's address stayed")
            _ = try device.cellpath(["bearer", "down", "-m", "0", "-q"])
        }
    }
}
