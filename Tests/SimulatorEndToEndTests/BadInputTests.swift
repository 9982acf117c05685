import TestSupport
import Testing

/// Bad input in the simulated world: `cellpath fetch` refuses it with exit 64 or 65
/// before sending anything, through the bearer or through Wi-Fi.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct BadInputTests {
    @Test func badInputIsRefusedBeforeAnyPacket() throws {
        try SimulatedDevice.with { device in
            let check = try device.subscriberCheckURL()
            let cases: [(arguments: [String], status: Int32)] = [
                (["https://api.truid.test/a\r\nX-Injected: 1"], 65),
                (["https://api.truid.test/a\nb"], 65),
                ([check.url, "--header", "X-Test: a\r\nX-Injected: 1"], 65),
                ([check.url, "--header", "X-Test\r\n: a"], 65),
                (["ftp://api.truid.test/file"], 65),
                (["file:///etc/passwd"], 65),
                (["gopher://mno.carrier.test/"], 65),
                (["not a url"], 65),
                (["https://"], 65),
                (["http://[::1/"], 65),
                ([check.url, "--header", "no colon"], 64),
                ([check.url, "--max-hops", "0"], 64)
            ]
            let mark = try device.requestLog().count
            let (results, packets) = try device.capture(on: ["wlan0", "wwan0"]) {
                try cases.map {
                    try device.cellpath(
                        ["fetch", "--interface", "wwan0", "--dns", "100.64.0.53"] + $0.arguments + ["--json"])
                }
            }
            for (result, input) in zip(results, cases) {
                #expect(
                    result.status == input.status,
                    "\(input.arguments.map { $0.debugDescription }): \(result.status) \(result.stderr)")
            }
            #expect(packets["wlan0"] == [], "\(packets)")
            #expect(packets["wwan0"] == [], "\(packets)")
            #expect(try device.requestLog().count == mark)

            // Control: the same capture sees a valid fetch of the same check.
            let (valid, seen) = try device.capture(on: ["wwan0"]) { try device.fetch([check.url]) }
            #expect(valid.status == 0, "\(valid.stderr)")
            #expect((seen["wwan0"]?.count ?? 0) > 0)
        }
    }
}
