import CellpathCore
import Glibc
import Simulator
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// A check records the radio its check_url chain ran on, as the world's modem reports it: the
/// scenario's serving cell over MBIM and QMI, the new cell after a handover between two runs of
/// a field run, and nothing for what the modem does not report.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
struct RadioContextEndToEndTests {
    static let cells = [
        SimulatedCell(
            cellId: 0x0123_4567, tac: 0x1234, pci: 211, band: 20, channel: 6300, rssiDbm: -65, rsrpDbm: -88,
            rsrqDb: -7, sinrDb: 18.5),
        SimulatedCell(
            cellId: 0x0000_0777, tac: 0x0042, pci: 7, band: 3, channel: 1300, rssiDbm: -99, rsrpDbm: -121,
            rsrqDb: -17, sinrDb: -2)
    ]

    static func scenario(_ kind: SimulatorScenario.ModemProtocol, device: DeviceProfile.Name) -> Scenario {
        var scenario = Scenario.builtIn
        scenario.modems[0].protocol = kind
        scenario.modems[0].device = device
        scenario.modems[0].network.cells = cells
        return scenario
    }

    @Test(arguments: [
        (SimulatorScenario.ModemProtocol.mbim, DeviceProfile.Name.pcieMHIMBIM),
        (.qmi, .simulated)
    ])
    func aChecksJSONCarriesTheScenariosRadio(
        _ kind: SimulatorScenario.ModemProtocol, _ device: DeviceProfile.Name
    )
        throws
    {
        try SimulatedDevice.with(Self.scenario(kind, device: device), connect: false) { world in
            let result = try world.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let radio = try #require(try JSONValue.parse(result.stdout)["radio"])
            #expect(radio[string: "source"] == kind.rawValue)
            #expect(radio[string: "rat"] == "lte")
            #expect(radio[string: "operator"] == "001-01")
            #expect(radio[string: "operator_name"] == "cellpath sim")
            #expect(radio["roaming"] == .bool(false))
            #expect(radio["cell_id"] == .int(0x0123_4567))
            #expect(radio["tac"] == .int(0x1234))
            #expect(radio["pci"] == .int(211))
            #expect(radio[string: "band"] == "B20")
            #expect(radio["channel"] == .int(6300))
            #expect(Self.number(radio["rssi_dbm"]) == -65)
            #expect(Self.number(radio["rsrp_dbm"]) == -88)
            #expect(Self.number(radio["rsrq_db"]) == -7)
            if kind == .qmi { #expect(Self.number(radio["sinr_db"]) == 18.5) } else { #expect(radio["sinr_db"] == nil) }
            #expect(radio["ss_rsrp_dbm"] == nil)
            let human = try world.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct"])
            #expect(
                human.stderr.contains("radio: lte 001-01, cell 19088743 (PCI 211, B20), RSRP -88 dBm"),
                "\(human.stderr)")
        }
    }

    @Test func aHandoverBetweenTwoRunsShowsTheNewCell() throws {
        try SimulatedDevice.with(Self.scenario(.qmi, device: .simulated), connect: false) { world in
            let output = try TemporaryDirectory.make("cellpath-radio") + "/runs.jsonl"
            defer { FileSystem.removeTree(String(output.dropLast("/runs.jsonl".count))) }
            let metrics = String(output.dropLast("runs.jsonl".count)) + "check.prom"
            let run = try BackgroundProcess(
                [
                    CellpathBinary.path, "sim", "exec", "--prefix", world.prefix, "--", CellpathBinary.path,
                    "subscriber-check", "+447940448591", "-m", "0", "--direct", "--repeat", "2", "--interval", "4",
                    "--json", "--metrics-file", metrics
                ], output: output)
            defer { run.stop() }
            let firstRun = Poll.until(timeout: .seconds(60)) { Self.runLines(output).count >= 1 }
            try #require(firstRun, "no first run: \(FileSystem.readText(output) ?? "")")
            _ = try SimulatedWorld.lifecycle(.handover(cell: 1), prefix: world.prefix)
            #expect(run.wait(timeoutMs: 60_000))
            #expect(run.exitStatus == 0, "\(FileSystem.readText(output) ?? "")")
            let lines = Self.runLines(output)
            try #require(lines.count == 3, "\(lines)")
            #expect(lines[0]["radio"]?["cell_id"] == .int(0x0123_4567))
            #expect(lines[1]["radio"]?["cell_id"] == .int(0x777))
            #expect(Self.number(lines[1]["radio"]?["rsrp_dbm"]) == -121)
            #expect(lines[1]["radio"]?[string: "band"] == "B3")
            let groups = lines[2]["radio"]?.array ?? []
            #expect(groups.count == 1, "\(groups)")
            #expect(groups.first?["runs"] == .int(2))
            let prometheus = FileSystem.readText(metrics) ?? ""
            #expect(
                prometheus.contains(
                    "cellpath_radio_rsrp_dbm{product=\"subscriber_check\",operator=\"001-01\",rat=\"lte\"} -121.0"),
                "\(prometheus)")
        }
    }

    /// The built-in modem (MBIM without MS Basic Connect Extensions) tells its network and RSSI,
    /// not its cell: those keys are absent.
    @Test func aModemThatCannotTellTheCellLeavesItOut() throws {
        try SimulatedDevice.with(Self.scenario(.mbim, device: .simulated), connect: false) { world in
            let result = try world.cellpath(["subscriber-check", "+447940448591", "-m", "0", "--direct", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let radio = try #require(try JSONValue.parse(result.stdout)["radio"])
            #expect(radio[string: "rat"] == "lte")
            #expect(Self.number(radio["rssi_dbm"]) == -65)
            for absent in ["cell_id", "tac", "lac", "pci", "band", "channel", "rsrp_dbm", "rsrq_db", "sinr_db"] {
                #expect(radio[absent] == nil, "\(absent): \(radio)")
            }
        }
    }

    /// Through ModemManager: the registration's network and technology, the Signal interface's
    /// values (set up for the read); over MBIM the serving cell of its cell info (Base Stations
    /// Info), over QMI the cell id and TAC of its 3GPP location (ModemManager 1.20 has no QMI
    /// cell info). ModemManager publishes no LTE RSSI from MBIM's Signal State.
    @Test(arguments: [
        (SimulatorScenario.ModemProtocol.mbim, DeviceProfile.Name.pcieMHIMBIM),
        (.qmi, .usbQMIRawIP)
    ])
    func modemManagerTellsTheSignalAndTheCell(
        _ kind: SimulatorScenario.ModemProtocol, _ device: DeviceProfile.Name
    ) throws {
        var scenario = Self.scenario(kind, device: device)
        scenario.modemManager = true
        try SimulatedDevice.with(scenario, connect: false) { world in
            let result = try world.cellpath([
                "subscriber-check", "+447940448591", "-m", "0", "--backend", "modemmanager", "--direct", "--json"
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let radio = try #require(try JSONValue.parse(result.stdout)["radio"])
            #expect(radio[string: "source"] == "modemmanager")
            #expect(radio[string: "rat"] == "lte")
            #expect(radio[string: "operator"] == "001-01")
            #expect(radio["roaming"] == .bool(false))
            #expect(radio["cell_id"] == .int(0x0123_4567), "\(radio)")
            #expect(radio["tac"] == .int(0x1234))
            #expect(Self.number(radio["rsrp_dbm"]) == -88)
            #expect(Self.number(radio["rsrq_db"]) == -7)
            if kind == .mbim {
                #expect(radio["pci"] == .int(211))
                #expect(radio["channel"] == .int(6300))
                #expect(radio[string: "band"] == "B20")
                #expect(radio["rssi_dbm"] == nil)
            } else {
                #expect(Self.number(radio["rssi_dbm"]) == -65)
                #expect(Self.number(radio["sinr_db"]) == 18.5)
                for absent in ["pci", "channel", "band"] { #expect(radio[absent] == nil, "\(absent): \(radio)") }
            }
        }
    }

    /// A JSON number, whole or not.
    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let whole): Double(whole)
        case .double(let fraction): fraction
        default: nil
        }
    }

    /// The JSON lines of the runs and the summary in `path` (stdout and stderr share it).
    static func runLines(_ path: String) -> [JSONValue] {
        (FileSystem.readText(path) ?? "").split(separator: "\n").filter { $0.hasPrefix("{") }.compactMap {
            JSONValue.parse(Array($0.utf8))
        }
    }
}
