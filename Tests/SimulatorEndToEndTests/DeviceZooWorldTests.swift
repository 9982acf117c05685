import CellpathCore
import Glibc
import SimulatorScenario
import Testing
import TestSupport

/// The zoo scenario (scripts/zoo-scenario.json, every profile once) as one world with the real
/// ModemManager: what `mmcli` shows of each profile (plugin, ports, state), and what cellpath
/// does with each today (`cellpath modems --json`). The "today" expectations record the
/// behaviour as it is, gaps included, for the issues that will change it.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)))
struct DeviceZooWorldTests {
    /// What ModemManager 1.20 makes of one profile: its plugin, primary port, ports as `mmcli`
    /// lists them, and state.
    struct ModemManagerView: Sendable {
        let plugin: String
        let primaryPort: String
        let ports: [String]
        var state = "disabled"
    }

    /// Per profile, for modem N of the zoo scenario (names with N); nil: no modem at all.
    static func expectedModemManagerView(_ name: DeviceProfile.Name, _ n: Int) -> ModemManagerView? {
        let usbMBIM = ["cdc-wdm\(n) (mbim)", "wwan\(n) (net)"]
        let pcieMBIM = ["wwan\(n) (net)", "wwan\(n)at0 (at)", "wwan\(n)mbim0 (mbim)"]
        return switch name {
        case .usbMBIMv1, .dualSIM: ModemManagerView(plugin: "quectel", primaryPort: "cdc-wdm\(n)", ports: usbMBIM)
        case .usbMBIMv3: ModemManagerView(plugin: "telit", primaryPort: "cdc-wdm\(n)", ports: usbMBIM)
        case .usbMBIMFCCLocked: ModemManagerView(plugin: "sierra", primaryPort: "cdc-wdm\(n)", ports: usbMBIM)
        case .usbQMIRawIP, .usbQMIQMAP:
            ModemManagerView(plugin: "quectel", primaryPort: "cdc-wdm\(n)",
                             ports: ["cdc-wdm\(n) (qmi)", "ttyUSB\(n) (at)", "wwan\(n) (net)"])
        case .usbQMIUIMOnly:
            ModemManagerView(plugin: "sierra", primaryPort: "cdc-wdm\(n)",
                             ports: ["cdc-wdm\(n) (qmi)", "wwan\(n) (net)"])
        case .pcieMHIMBIM: ModemManagerView(plugin: "quectel", primaryPort: "wwan\(n)mbim0", ports: pcieMBIM)
        case .pcieMHINet:
            ModemManagerView(plugin: "quectel", primaryPort: "wwan\(n)qmi0",
                             ports: ["mhi_hwip\(n) (net)", "wwan\(n)at0 (at)", "wwan\(n)qmi0 (qmi)"])
        // MediaTek's plugin in 1.20 takes only tty, net and usbmisc ports: the generic one claims the FM350.
        case .pcieT7xx: ModemManagerView(plugin: "generic", primaryPort: "wwan\(n)mbim0", ports: pcieMBIM)
        case .pcieIOSM:
            ModemManagerView(plugin: "Intel", primaryPort: "wwan\(n)mbim0",
                             ports: ["wwan\(n) (net)", "wwan\(n)mbim0 (mbim)"])
        // The L850: an AT-only modem whose capabilities cannot be read; the XMM RPC port is not claimed.
        case .pcieIOSMUnsupported:
            ModemManagerView(plugin: "Intel", primaryPort: "wwan\(n)at0", ports: ["wwan\(n)at0 (at)"], state: "failed")
        case .routerMode, .simulated: nil
        }
    }

    @Test func modemManagerSeesEachProfileAsARealOne() throws {
        var scenario = try Scenario.load(path: Repository.root + "/scripts/zoo-scenario.json")
        scenario.modemManager = true
        try SimulatedDevice.with(scenario, connect: false) { device in try Self.checkModemManager(device, scenario) }
    }

    @Test func cellpathModemsOnTheZooToday() throws {
        let scenario = try Scenario.load(path: Repository.root + "/scripts/zoo-scenario.json")
        try SimulatedDevice.with(scenario, connect: false) { device in try Self.checkCellpathToday(device, scenario) }
    }

    /// `mmcli -L` lists one modem per profile with an MBIM, QMI or AT port (the L850's comes
    /// last: its XMM RPC port is probed with AT until that times out); each has the plugin,
    /// ports, drivers and state of its profile.
    static func checkModemManager(_ device: SimulatedDevice, _ scenario: Scenario) throws {
        let expected = scenario.modems.enumerated().compactMap { n, modem in
            Self.expectedModemManagerView(modem.device, n).map { (modem, $0) }
        }
        var paths: [String] = []
        for _ in 0..<180 {  // up to 90 s
            let list = try device.run(["mmcli", "-J", "-L"])
            paths = (try? JSONValue.parse(list.stdout))?["modem-list"]?.array?.compactMap(\.string) ?? []
            if paths.count >= expected.count { break }
            usleep(500_000)
        }
        #expect(paths.count == expected.count)
        var byPrimaryPort: [String: JSONValue] = [:]
        for path in paths {
            let shown = try JSONValue.parse(try device.run(["mmcli", "-J", "-m", path]).stdout)
            if let generic = shown["modem"]?["generic"], let primary = generic["primary-port"]?.string {
                byPrimaryPort[primary] = generic
            }
        }
        for (modem, view) in expected {
            let name = modem.device.rawValue
            let generic = try #require(byPrimaryPort[view.primaryPort], "\(name): not listed")
            #expect(generic["plugin"]?.string == view.plugin, "\(name)")
            #expect(generic["ports"]?.array?.compactMap(\.string).sorted() == view.ports.sorted(), "\(name)")
            #expect(generic["drivers"]?.array?.compactMap(\.string).contains(modem.profile.driver) == true, "\(name)")
            #expect(generic["state"]?.string == view.state, "\(name)")
        }
    }

    /// `cellpath modems --json` today: every profile with an MBIM or QMI port is listed with its
    /// control port; mhi_net's `mhi_hwipN` is not matched to its modem (no interface); the L850
    /// and the router-mode modem are not listed at all.
    static func checkCellpathToday(_ device: SimulatedDevice, _ scenario: Scenario) throws {
        let result = try device.cellpath(["modems", "--json", "--verbose-full"])
        #expect(result.status == 0, "\(result.stderr)")
        let modems = try #require(try JSONValue.parse(result.stdout)["modems"]?.array)
        var byIMEI: [String: JSONValue] = [:]
        for modem in modems { if let imei = modem["imei"]?.string { byIMEI[imei] = modem } }
        for (n, modem) in scenario.modems.enumerated() {
            let profile = modem.profile
            guard let control = profile.controlDevice(index: n) else {
                #expect(byIMEI[modem.imei] == nil, "\(modem.device.rawValue) is not listed today")
                continue
            }
            let listed = try #require(byIMEI[modem.imei], "\(modem.device.rawValue): not listed")
            #expect(listed["port"]?.string == control.name, "\(modem.device.rawValue)")
            #expect(listed["protocol"]?.string == control.type.lowercased(), "\(modem.device.rawValue)")
            let interface: String? = profile.netDevice == .mhiNet ? nil : profile.netDeviceName(index: n)
            #expect(listed["interface"]?.string == interface, "\(modem.device.rawValue)")
            #expect(listed["model"]?.string == modem.model && listed["error"] == .null, "\(modem.device.rawValue)")
        }
        #expect(modems.count == scenario.modems.filter { $0.profile.controlProtocol != nil }.count)
    }
}
