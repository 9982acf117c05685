import CellpathCore
import SimulatedModems
import Simulator
import SimulatorScenario
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

    @Test func eachModemsTUNDeviceIsNamedAsItsProfilesNetDevice() throws {
        var scenario = Scenario.builtIn
        scenario.modems = [DeviceProfile.Name.simulated, .pcieMHINet, .routerMode, .pcieIOSMUnsupported, .pcieT7xx].map
        {
            var modem = SimulatedModem(protocol: .mbim)
            modem.device = $0
            return modem
        }
        let topology = WorldTopology(prefix: "cp-", scenario: scenario)
        #expect(topology.modemCount == 5)
        #expect((0 ..< 5).map(topology.modemInterface) == ["wwan0", "mhi_hwip1", "usb2", "wwan3", "wwan4"])
        #expect(WorldTopology(prefix: "cp-", modemCount: 2).modemInterfaces == ["wwan0", "wwan1"])
    }

    @Test func theIPv6PlanGivesEachModemItsOwnSlash64() {
        let topology = WorldTopology(prefix: "cp-", modemCount: 32)
        #expect(topology.bearerIPv6Prefix(0) == "2001:db8:64:10::/64")
        #expect(topology.bearerIPv6Prefix(1) == "2001:db8:64:11::/64")
        #expect(topology.bearerIPv6Prefix(31) == "2001:db8:64:2f::/64")
        #expect(topology.bearerIPv6Address(1) == "2001:db8:64:11::2")
        let dual = BearerAssignment.carrier(modemIndex: 1, ipType: .ipv4v6)
        #expect(
            dual.ipv4
                == FamilyAssignment(
                    address: "100.64.23.11", prefixLength: 32, gateway: "100.64.0.1", dnsServers: ["100.64.0.53"]))
        #expect(
            dual.ipv6
                == FamilyAssignment(
                    address: "2001:db8:64:11::2", prefixLength: 64, gateway: "2001:db8:64:11::1",
                    dnsServers: ["2001:db8:64::53"]))
        let v6 = BearerAssignment.carrier(modemIndex: 0, ipType: .ipv6)
        #expect(v6.ipv4 == nil && v6.ipType == .ipv6)
    }
}
