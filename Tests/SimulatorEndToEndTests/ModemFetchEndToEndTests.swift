import CellpathCore
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// `cellpath fetch --modem 0` in the simulated world: the front hands the fetch to
/// cellpath-modem, which brings the modem's bearer up over MBIM, runs the check_url chain
/// through it, and takes the bearer down again; nothing goes through Wi-Fi, DNS included.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ModemFetchEndToEndTests {
    @Test func theCheckURLChainThroughTheModemsOwnBearerSendsNothingThroughWiFi() throws {
        try SimulatedDevice.with(connect: false) { device in
            let check = try device.subscriberCheckURL()  // backend leg, over Wi-Fi, before the capture
            let logMark = try device.requestLog().count
            // wwan0 is down until the fetch brings the bearer up: only Wi-Fi can be captured from the start.
            let (fetch, packets) = try device.capture(on: ["wlan0"]) {
                try device.cellpath(["fetch", "--modem", "0", check.url, "--json", "-v"])
            }
            #expect(fetch.status == 0, "\(fetch.stderr)")
            #expect(fetch.stderr.contains("handing 'cellpath fetch' to cellpath-modem"))
            #expect(fetch.stderr.contains("info: [modem0] bearer connected"))
            #expect(packets["wlan0"] == [], "packets on wlan0 during the chain: \(packets["wlan0"] ?? [])")
            // The whole chain, as the servers saw it: api → carrier → api, all from the bearer.
            let chain = try Array(device.requestLog().dropFirst(logMark))
            #expect(
                chain.map { $0["namespace"]?.string } == [
                    device.prefix + "inet", device.prefix + "carrier", device.prefix + "inet"
                ])
            #expect(chain.allSatisfy { $0["source"]?.string == "100.64.23.10" }, "\(chain)")
            let json = try JSONValue.parse(fetch.stdout)
            #expect(json.hops.count == 3)
            #expect(json["modem_backend"]?.string == "mbim")  // no ModemManager in this world
            #expect(json.hops.allSatisfy { $0["local_address"]?.string == "100.64.23.10" })
            #expect(json["result"]?["callback"]?["check_id"]?.string == check.id)

            // The bearer this fetch brought up is down again, and its configuration gone.
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
            #expect(try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("inet ") == false)
            #expect(try device.run(["ip", "rule"]).stdout.contains("100.64.23.10") == false)
        }
    }

    /// Without --interface and with one modem, fetch uses it; --keep-bearer leaves the bearer up
    /// for later fetches, and a bearer that was up before is reused and left up.
    @Test func withoutAnInterfaceTheModemIsUsedAndKeptWhenAsked() throws {
        try SimulatedDevice.with(connect: false) { device in
            let first = try device.cellpath(["fetch", "--keep-bearer", "--json", "http://mno.carrier.test/"])
            // The carrier's endpoint answers / with an error: the fetch ran, through the bearer.
            #expect(try JSONValue.parse(first.stdout).hops.first?["local_address"]?.string == "100.64.23.10")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "connected")
            let second = try device.cellpath(["fetch", "--json", "http://mno.carrier.test/"])
            #expect(try JSONValue.parse(second.stdout).hops.first?["local_address"]?.string == "100.64.23.10")
            #expect(
                try device.status()["modems"]?.array?[0]["bearer"]?.string == "connected", "a reused bearer stays up")
            let down = try device.cellpath(["bearer", "down"])
            #expect(down.status == 0, "\(down.stderr)")
            #expect(try device.status()["modems"]?.array?[0]["bearer"]?.string == "disconnected")
        }
    }

    /// The network drops the bearer while the chain waits for a slow API: the path is marked
    /// down at once (a warning with the network's reason), the dead bearer's address is removed
    /// so that the fetch fails closed at once (69: interfaceDown or addressGone, not the hop timeout's 75),
    /// nothing goes through Wi-Fi, and what the fetch configured is removed.
    @Test func aBearerDroppedDuringTheFetchFailsItClosed() throws {
        try SimulatedDevice.withBearerDroppedDuringAFetch(Scenario.builtIn) { device, fetch throws in
            #expect(
                fetch.stderr.contains(
                    "warning: [modem0] the network dropped the bearer (regular-deactivation): the path is down"),
                "\(fetch.stderr)")
            #expect(try device.run(["ip", "-4", "addr", "show", "dev", "wwan0"]).stdout.contains("inet ") == false)
            #expect(try device.run(["ip", "rule"]).stdout.contains("100.64.23.10") == false)
        }
    }
}
