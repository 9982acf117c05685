import CellpathCore
import SimulatorScenario
import Testing

/// A modem's network cells: read from the scenario, their defaults, the daemon's copy, and
/// bad values named by their field.
@Suite struct CellScenarioTests {
    @Test func withoutCellsTheNetworkHasOneLTECellWithItsRSSI() throws {
        let cells = try decode(#"{"modems": [{"network": {"rssiDbm": -80}}]}"#).modems[0].network.cells
        #expect(cells == [SimulatedCell(rssiDbm: -80)])
        #expect(cells[0].rat == .lte && cells[0].band == 3 && cells[0].cellId == 27_447_297)
    }

    @Test func cellsAreReadAndSurviveTheDaemonsCopy() throws {
        let scenario = try decode(
            #"""
            {"modems": [{"network": {"cells": [
                {"cellId": 19088743, "tac": 4660, "pci": 211, "band": 20, "channel": 6300, "rsrpDbm": -88,
                 "rsrqDb": -7, "sinrDb": 18.5, "rssiDbm": -65},
                {"rat": "umts", "cellId": 4325442, "band": null, "channel": 10700}]}}]}
            """#)
        let cells = scenario.modems[0].network.cells
        #expect(
            cells == [
                SimulatedCell(
                    cellId: 19_088_743, tac: 4660, pci: 211, band: 20, channel: 6300, rssiDbm: -65, rsrpDbm: -88,
                    rsrqDb: -7, sinrDb: 18.5),
                SimulatedCell(rat: .umts, cellId: 4_325_442, band: nil, channel: 10700)
            ])
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
    }

    /// A cell of another operator: the network as the modem sees it there, and back on a cell of
    /// the network's own; a handover event names a cell.
    @Test func aCellOfAnotherOperatorAndAHandoverEvent() throws {
        let scenario = try decode(
            #"""
            {"modems": [{"network": {"cells": [{}, {"rat": "umts", "mcc": "001", "mnc": "02",
                                                    "operatorName": "roam"}]}}],
             "events": [{"atSeconds": 5, "event": "handover", "cell": 1}]}
            """#)
        let network = scenario.modems[0].network
        #expect(network.serving(cell: 1).operatorID == "001-02")
        #expect(network.serving(cell: 1).operatorName == "roam")
        #expect(network.serving(cell: 0).operatorID == "001-01")
        #expect(network.serving(cell: 0).operatorName == "cellpath sim")
        #expect(scenario.events.first?.event == .handover && scenario.events.first?.cell == 1)
        #expect(try Scenario.decode(scenario.encoded()) == scenario)
    }

    /// The network a SIM registers on: a second slot's own wherever the modem camps, else the
    /// modem's as it is on its cell; a second slot without a network of its own follows the cells.
    @Test func theNetworkOfEachSlot() {
        var modem = SimulatedModem(index: 0)
        modem.network.cells = [SimulatedCell(), SimulatedCell(cellId: 2)]
        modem.network.cells[1].mcc = "001"
        modem.network.cells[1].mnc = "02"
        #expect(modem.network(slot: 1, cell: 1).operatorID == "001-02")
        #expect(modem.network(slot: 2, cell: 1).operatorID == "001-02")
        modem.secondSlot = SecondSIMSlot(
            esim: false, sim: SimulatedSIM(index: 32), network: SimulatedNetwork(mnc: "03"))
        #expect(modem.network(slot: 2, cell: 0).operatorID == "001-03")
        #expect(modem.network(slot: 2, cell: 1).operatorID == "001-03")
        #expect(modem.network(slot: 1, cell: 0).operatorID == "001-01")
    }

    @Test(arguments: [
        (
            #"{"modems": [{"network": {"cells": [{"mcc": "001"}]}}]}"#,
            "modems[0].network.cells[0].mnc: must be given with mcc"
        ),
        (
            #"{"modems": [{"network": {"cells": [{"mcc": "1", "mnc": "02"}]}}]}"#,
            "modems[0].network.cells[0].mcc: must be 3 digits"
        ),
        (
            #"{"modems": [{}], "events": [{"atSeconds": 1, "event": "handover", "cell": 1}]}"#,
            "events[0].cell: handover needs a cell of modem 0's network, 0 to 0"
        ),
        (#"{"modems": [{"network": {"cells": []}}]}"#, "modems[0].network.cells: must hold at least one cell"),
        (#"{"modems": [{"network": {"cells": [{"pci": 504}]}}]}"#, "modems[0].network.cells[0].pci: must be 0 to 503"),
        (#"{"modems": [{"network": {"cells": [{"rat": "nr"}]}}]}"#, "modems[0].network.cells[0].rat: must be one of"),
        (
            #"{"modems": [{"network": {"cells": [{}, {"rsrpDbm": -20}]}}]}"#,
            "modems[0].network.cells[1].rsrpDbm: must be between -156 and -31 dBm"
        ),
        (#"{"modems": [{"network": {"cells": [{"cell": 1}]}}]}"#, "cell")
    ])
    func badCellsNameTheField(json: String, expected: String) throws {
        let error = #expect(throws: CellpathError.self) { try Scenario.decode(Array(json.utf8)) }
        #expect(error?.kind == .dataError)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }
}
