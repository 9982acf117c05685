import CellpathCore
import FoundationEssentials
import Simulator
import SimulatorScenario
import TestSupport
import Testing

/// A bearer connected by the real mbimcli or qmicli, with wwanN configured by hand
/// from the address the modem reported, carries traffic to the carrier; after the modem's
/// disconnect the same traffic is blackholed. The control plane and the data path are one.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct ModemDataPathTests {
    private static var scenario: Scenario {
        var scenario = Scenario.builtIn
        scenario.modems = [
            SimulatedModem(protocol: .mbim),
            SimulatedModem(
                protocol: .qmi, imei: "351234567890124",
                sim: SimulatedSIM(iccid: "8900101234567890124", imsi: "001010123456780", msisdn: "+447940448592"))
        ]
        return scenario
    }

    /// A host tool (mbimcli, qmicli, ip) that must succeed; its stdout.
    @discardableResult
    private func tool(_ arguments: [String]) throws -> String {
        let result = try ProcessRunner.run(arguments, environment: SimulatedDevice.path)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result.stdout
    }

    /// The value after `label` on the first line of mbimcli/qmicli output that has it, unquoted.
    private func field(_ text: String, after label: String) -> String? {
        guard let line = text.split(separator: "\n").first(where: { $0.contains(label) }) else { return nil }
        guard let value = line.split(separator: ":", maxSplits: 1).dropFirst().first else { return nil }
        return Substring(value.filter { $0 != "'" }).trimmingCharacters(in: " ")
    }

    /// Configures `interface` in the device namespace by hand, as docs/simulator.md describes.
    private func configure(_ device: SimulatedDevice, _ interface: String, address: String, metric: Int) throws {
        try tool(["ip", "-n", device.ue, "addr", "add", "\(address)/32", "dev", interface])
        try tool(["ip", "-n", device.ue, "link", "set", interface, "up"])
        try tool(["ip", "-n", device.ue, "route", "replace", "default", "dev", interface, "metric", "\(metric)"])
    }

    /// curl bound to `interface` to the carrier's endpoint; returns curl's exit status and the
    /// log lines the carrier wrote for it.
    private func reachCarrier(
        _ device: SimulatedDevice, through interface: String
    ) throws -> (status: Int32, logged: [JSONValue]) {
        let mark = try device.requestLog().count
        let result = try device.run([
            "curl", "-sS", "-o", "/dev/null", "--max-time", "3", "--interface", interface,
            "http://100.64.0.1/"
        ])
        let logged = Array(try device.requestLog().dropFirst(mark)).filter {
            $0["namespace"]?.string == device.prefix + "carrier"
        }
        return (result.status, logged)
    }

    private func bearerState(_ device: SimulatedDevice, _ modem: Int) throws -> String? {
        try device.status()["modems"]?.array?[modem]["bearer"]?.string
    }

    @Test func mbimcliConnectCarriesTrafficAndDisconnectBlackholesIt() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let port = try #require(try device.status()["modems"]?.array?[0]["control_port"]?.string)
            // Nothing flows before the modem connects.
            #expect(try reachCarrier(device, through: "wwan0").status != 0)

            let connect = try tool(["mbimcli", "-d", port, "--connect=apn=internet", "--no-close"])
            let address = try #require(field(connect, after: "IP [0]:")).split(separator: "/").first.map(String.init)
            #expect(address == "100.64.23.10")
            let trid = try #require(field(connect, after: "TRID:"))
            #expect(try bearerState(device, 0) == "connected")
            try configure(device, "wwan0", address: try #require(address), metric: 700)

            let reached = try reachCarrier(device, through: "wwan0")
            #expect(reached.status == 0)
            #expect(reached.logged.count == 1)
            #expect(reached.logged.first?["source"]?.string == "100.64.23.10")

            try tool(["mbimcli", "-d", port, "--no-open=\(trid)", "--disconnect"])
            #expect(try bearerState(device, 0) == "disconnected")
            // The host configuration is still there, but the modem no longer relays.
            #expect(try tool(["ip", "-n", device.ue, "-4", "addr", "show", "dev", "wwan0"]).contains("100.64.23.10/32"))
            let blackholed = try reachCarrier(device, through: "wwan0")
            #expect(blackholed.status == 28)  // CURLE_OPERATION_TIMEDOUT
            #expect(blackholed.logged.isEmpty)
        }
    }

    @Test func qmicliStartNetworkCarriesTrafficAndStopNetworkBlackholesIt() throws {
        try SimulatedDevice.with(Self.scenario, connect: false) { device in
            let port = try #require(try device.status()["modems"]?.array?[1]["control_port"]?.string)
            #expect(try reachCarrier(device, through: "wwan1").status != 0)

            let start = try tool([
                "qmicli", "-d", port, "--device-open-qmi", "--wds-start-network=apn=internet,ip-type=4",
                "--client-no-release-cid"
            ])
            let handle = try #require(field(start, after: "Packet data handle:"))
            let cid = try #require(field(start, after: "CID:"))
            #expect(try bearerState(device, 1) == "connected")
            let settings = try tool([
                "qmicli", "-d", port, "--device-open-qmi", "--wds-get-current-settings",
                "--client-cid=\(cid)", "--client-no-release-cid"
            ])
            let address = try #require(field(settings, after: "IPv4 address:"))
            #expect(address == "100.64.23.11")
            try configure(device, "wwan1", address: address, metric: 701)

            let reached = try reachCarrier(device, through: "wwan1")
            #expect(reached.status == 0)
            #expect(reached.logged.count == 1)
            #expect(reached.logged.first?["source"]?.string == "100.64.23.11")
            // The other modem's bearer is down: its interface carries nothing.
            #expect(try bearerState(device, 0) == "disconnected")

            try tool(["qmicli", "-d", port, "--device-open-qmi", "--wds-stop-network=\(handle)", "--client-cid=\(cid)"])
            #expect(try bearerState(device, 1) == "disconnected")
            let blackholed = try reachCarrier(device, through: "wwan1")
            #expect(blackholed.status == 28)
            #expect(blackholed.logged.isEmpty)
        }
    }
}
