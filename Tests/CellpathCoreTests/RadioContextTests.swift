import CellpathCore
import Testing

@Suite struct RadioContextTests {
    @Test func lteBandsFromEARFCN() {
        #expect(RadioContext.lteBand(earfcn: 0) == "B1")
        #expect(RadioContext.lteBand(earfcn: 1300) == "B3")
        #expect(RadioContext.lteBand(earfcn: 6300) == "B20")
        #expect(RadioContext.lteBand(earfcn: 3100) == "B7")
        #expect(RadioContext.lteBand(earfcn: 2700) == nil)
        #expect(RadioContext.lteBand(earfcn: 99999) == nil)
    }

    @Test func theRegistrationOnlyWhileRegistered() {
        let registered = Registration(
            state: .roaming, servingOperator: NetworkOperator(id: "001-01", name: "sim"), accessTechnology: .lte)
        let radio = RadioContext(source: "modemmanager", registration: registered)
        #expect(radio.accessTechnology == .lte)
        #expect(radio.servingOperator?.id == "001-01")
        #expect(radio.roaming == true)
        #expect(radio.rssiDbm == nil)
        let searching = RadioContext(source: "qmi", registration: Registration(state: .searching))
        #expect(searching == RadioContext(source: "qmi"))
    }
}
