import CellpathCore
import Modems
import Testing

/// The debug log's words for indications: states and the network's own names, no Swift dumps.
@Suite struct IndicationDescriptionTests {
    @Test func registrationNamesStateNetworkAndTechnology() {
        let home = ModemIndication.registration(
            Registration(
                state: .home, servingOperator: NetworkOperator(id: "001-01", name: "cellpath sim"),
                accessTechnology: .lte))
        #expect(home.description == "registration home on 001-01 (cellpath sim), lte")
        let denied = ModemIndication.registration(Registration(state: .denied, networkError: "plmn-not-allowed"))
        #expect(denied.description == "registration denied (plmn-not-allowed)")
        let unnamed = ModemIndication.registration(
            Registration(state: .roaming, servingOperator: NetworkOperator(id: nil, name: nil)))
        #expect(unnamed.description == "registration roaming")
    }

    @Test func bearerAndPacketService() {
        #expect(
            ModemIndication.bearer(.disconnected, reason: "regular-deactivation").description
                == "bearer disconnected (regular-deactivation)")
        #expect(ModemIndication.bearer(.connected, reason: nil).description == "bearer connected")
        #expect(ModemIndication.packetService(.attached).description == "packet service attached")
    }
}
