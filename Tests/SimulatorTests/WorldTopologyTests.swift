import CellpathCore
import Simulator
import Testing

@Suite struct WorldTopologyTests {
    @Test func topologyNamesFollowThePrefix() throws {
        let topology = WorldTopology(prefix: "cp-", modemCount: 3)
        #expect(topology.namespaces == ["cp-ue", "cp-carrier", "cp-inet"])
        #expect(topology.modemInterface(2) == "wwan2")
        #expect(topology.radioInterface(2) == "radio2")
        #expect(topology.bearerAddress(0) == "100.64.23.10")
        #expect(topology.bearerAddress(2) == "100.64.23.12")
        try WorldTopology.validate(prefix: "ct12ab-_")
        try WorldTopology.validate(prefix: "Lab1")
        for bad in ["", "-cp", "cp/x", "cp.x", "ninechar-", "cp ue"] {
            #expect(throws: CellpathError.self) { try WorldTopology.validate(prefix: bad) }
        }
    }
}
