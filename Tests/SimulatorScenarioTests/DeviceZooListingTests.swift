import SimulatorScenario
import Testing

/// The rows `cellpath sim profiles` lists: one per profile, with the names modem 0 gets.
@Suite struct DeviceZooListingTests {
    @Test func everyProfileHasARowWithItsIdsPortsAndNetDevice() throws {
        let rows = DeviceZooRow.all
        #expect(rows.map(\.name) == ["simulated"] + DeviceProfile.zoo.map(\.name.rawValue))
        let mhi = try #require(rows.first { $0.name == "quectel-em120r-mhi" })
        #expect(
            mhi.bus == "pcie" && mhi.ids == "1eac:1001" && mhi.driver == "mhi-pci-generic" && mhi.protocol == "mbim")
        #expect(mhi.ports == ["wwan0mbim0 (MBIM)", "wwan0at0 (AT)"] && mhi.netDevice == "wwan0")
        let mhiNet = try #require(rows.first { $0.name == "quectel-rm520n-mhi-net" })
        #expect(mhiNet.ports == ["wwan0qmi0 (QMI)", "wwan0at0 (AT)"] && mhiNet.netDevice == "mhi_hwip0")
        let ec25 = try #require(rows.first { $0.name == "quectel-ec25-qmi" })
        #expect(
            ec25.ids == "2c7c:0125" && ec25.ports == ["cdc-wdm0 (QMI)", "ttyUSB0 (AT)"] && ec25.netDevice == "wwan0")
        let l850 = try #require(rows.first { $0.name == "intel-l850-xmm" })
        #expect(
            l850.protocol == "none" && l850.ports == ["wwan0xmmrpc0 (XMMRPC)", "wwan0at0 (AT)"]
                && l850.netDevice == "none")
        let router = try #require(rows.first { $0.name == "huawei-e3372h-hilink" })
        #expect(router.driver == "cdc_ether" && router.ports.isEmpty && router.netDevice == "usb0")
        #expect(rows.first?.ports == ["cdc-wdm0 (MBIM)", "wwan0mbim0 (MBIM)"])
    }
}
