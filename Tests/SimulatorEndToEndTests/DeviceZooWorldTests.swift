import CellpathCore
import Glibc
import SimulatorScenario
import TestSupport
import Testing

/// The zoo scenario (scripts/zoo-scenario.json, every profile once) as one world with the real
/// ModemManager: what `mmcli` shows of each profile (plugin, ports, state), and what cellpath
/// does with each (`cellpath modems --json`, the interface checks accept): every profile listed
/// where it belongs, the L850 as unsupported with its reason, the HiLink in router mode.
@Suite(.serialized, .enabled(if: RootTests.enabled, Comment(rawValue: RootTests.skipReason)), .ownThreads(.worlds))
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
            ModemManagerView(
                plugin: "quectel", primaryPort: "cdc-wdm\(n)",
                ports: ["cdc-wdm\(n) (qmi)", "ttyUSB\(n) (at)", "wwan\(n) (net)"])
        case .usbQMIUIMOnly:
            ModemManagerView(
                plugin: "sierra", primaryPort: "cdc-wdm\(n)",
                ports: ["cdc-wdm\(n) (qmi)", "wwan\(n) (net)"])
        case .pcieMHIMBIM: ModemManagerView(plugin: "quectel", primaryPort: "wwan\(n)mbim0", ports: pcieMBIM)
        case .pcieMHINet:
            ModemManagerView(
                plugin: "quectel", primaryPort: "wwan\(n)qmi0",
                ports: ["mhi_hwip\(n) (net)", "wwan\(n)at0 (at)", "wwan\(n)qmi0 (qmi)"])
        // MediaTek's plugin in 1.20 takes only tty, net and usbmisc ports: the generic one claims the FM350.
        case .pcieT7xx: ModemManagerView(plugin: "generic", primaryPort: "wwan\(n)mbim0", ports: pcieMBIM)
        case .pcieIOSM:
            ModemManagerView(
                plugin: "Intel", primaryPort: "wwan\(n)mbim0",
                ports: ["wwan\(n) (net)", "wwan\(n)mbim0 (mbim)"])
        // The L850: an AT-only modem whose capabilities cannot be read; the XMM RPC port is not claimed.
        case .pcieIOSMUnsupported:
            ModemManagerView(plugin: "Intel", primaryPort: "wwan\(n)at0", ports: ["wwan\(n)at0 (at)"], state: "failed")
        case .routerMode, .simulated, .captured: nil
        }
    }

    @Test func modemManagerSeesEachProfileAsARealOne() throws {
        var scenario = try Scenario.load(path: Repository.root + "/scripts/zoo-scenario.json")
        scenario.modemManager = true
        try SimulatedDevice.with(scenario, connect: false) { device in try Self.checkModemManager(device, scenario) }
    }

    @Test func cellpathModemsOnTheZoo() throws {
        let scenario = try Scenario.load(path: Repository.root + "/scripts/zoo-scenario.json")
        try SimulatedDevice.with(scenario, connect: false) { device in
            try Self.checkCellpathModems(device, scenario)
            try Self.checkCommandsRefuseWhatCellpathCannotDrive(device, scenario)
        }
    }

    /// `mmcli -L` lists one modem per profile with an MBIM, QMI or AT port (the L850's comes
    /// last: its XMM RPC port is probed with AT until that times out); each has the plugin,
    /// ports, drivers and state of its profile.
    static func checkModemManager(_ device: SimulatedDevice, _ scenario: Scenario) throws {
        let expected = scenario.modems.enumerated().compactMap { n, modem in
            Self.expectedModemManagerView(modem.device, n).map { (modem, $0) }
        }
        var paths: [String] = []
        for _ in 0 ..< 180 {  // up to 90 s
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

    /// `cellpath modems --json`: every profile is listed in discovery order (USB devices, then
    /// PCI functions): those with an MBIM or QMI port with their control port and net device
    /// (the RM520N's `mhi_hwipN` too), the L850 unsupported with its reason, the HiLink in
    /// router mode with its net device and driver.
    static func checkCellpathModems(_ device: SimulatedDevice, _ scenario: Scenario) throws {
        let result = try device.cellpath(["modems", "--json", "--verbose-full"])
        #expect(result.status == 0, "\(result.stderr)")
        let modems = try #require(try JSONValue.parse(result.stdout)["modems"]?.array)
        #expect(modems.count == scenario.modems.count)
        #expect(modems.compactMap { $0["index"]?.int } == Array(0 ..< modems.count))
        var byIMEI: [String: JSONValue] = [:]
        for modem in modems { if let imei = modem["imei"]?.string { byIMEI[imei] = modem } }
        for (n, modem) in scenario.modems.enumerated() {
            let profile = modem.profile, name = modem.device.rawValue
            guard let control = profile.controlDevice(index: n) else { continue }
            let listed = try #require(byIMEI[modem.imei], "\(name): not listed")
            #expect(listed["port"]?.string == control.name, "\(name)")
            #expect(listed["protocol"]?.string == control.type.lowercased(), "\(name)")
            #expect(listed["interface"]?.string == profile.netDeviceName(index: n), "\(name)")
            #expect(listed["supported"] == .bool(true) && listed["mode"]?.string == "modem", "\(name)")
            #expect(listed["model"]?.string == modem.model && listed["error"] == .null, "\(name)")
        }
        let l850Index = try #require(scenario.modems.firstIndex { $0.device == .pcieIOSMUnsupported })
        let l850Port = JSONValue.string("wwan\(l850Index)xmmrpc0")
        let l850 = try #require(modems.first { $0["ports"]?.array?.contains(l850Port) == true })
        #expect(l850["supported"] == .bool(false) && l850["mode"]?.string == "modem" && l850["interface"] == .null)
        #expect(
            l850["reason"]?.string == "Intel XMM7360 (8086:7360) exposes only XMM RPC and AT ports: "
                + "cellpath needs an MBIM or QMI port; see docs/operations.md")
        #expect(l850["pci"]?["vendor_id"]?.string == "8086" && l850["pci"]?["device_id"]?.string == "7360")
        let routerIndex = try #require(scenario.modems.firstIndex { $0.device == .routerMode })
        let router = try #require(modems.first { $0["interface"]?.string == "usb\(routerIndex)" })
        #expect(router["mode"]?.string == "router" && router["supported"] == .bool(true) && router["port"] == .null)
        #expect(router["driver"]?.string == "cdc_ether" && router["usb"]?["vendor_id"]?.string == "12d1")
        #expect(router["note"]?.string?.contains("--interface usb\(routerIndex)") == true)
    }

    /// `bearer up` naming the L850 or the router-mode modem is refused with the reason, exit
    /// 69; an interface check accepts the router-mode modem's net device and the RM520N's
    /// `mhi_hwipN`, and still refuses an interface no modem has.
    static func checkCommandsRefuseWhatCellpathCannotDrive(_ device: SimulatedDevice, _ scenario: Scenario) throws {
        let l850 = try #require(scenario.modems.firstIndex { $0.device == .pcieIOSMUnsupported })
        let router = try #require(scenario.modems.firstIndex { $0.device == .routerMode })
        let rm520n = try #require(scenario.modems.firstIndex { $0.device == .pcieMHINet })
        let refused = try device.cellpath(["bearer", "up", "-m", "wwan\(l850)xmmrpc0"])
        #expect(refused.status == 69, "\(refused.stderr)")
        #expect(
            refused.stderr.contains("Intel XMM7360 (8086:7360) exposes only XMM RPC and AT ports"),
            "\(refused.stderr)")
        let routerRefused = try device.cellpath(["bearer", "up", "-m", "usb\(router)"])
        #expect(routerRefused.status == 69 && routerRefused.stderr.contains("router mode"), "\(routerRefused.stderr)")
        for interface in ["usb\(router)", "mhi_hwip\(rm520n)"] {
            let fetch = try device.cellpath([
                "fetch", "--interface", interface, "--dns", "100.64.0.53",
                "--timeout", "2", "http://carrier.example/"
            ])
            #expect(!fetch.stderr.contains("is not a modem's network interface"), "\(interface): \(fetch.stderr)")
        }
        let other = try device.cellpath([
            "fetch", "--interface", "lo", "--dns", "100.64.0.53",
            "http://carrier.example/"
        ])
        #expect(
            other.status == 64 && other.stderr.contains("'lo' is not a modem's network interface"),
            "\(other.stderr)")
        #expect(other.stderr.contains("usb\(router) (router mode, cdc_ether)"), "\(other.stderr)")
    }
}
