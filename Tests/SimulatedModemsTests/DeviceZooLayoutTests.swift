import CellpathCore
import Glibc
import SimulatedModems
import SimulatorScenario
import SystemSupport
import TestSupport
import Testing

/// The zoo scenario's modems side by side: per profile, the /dev nodes and the sysfs layout
/// (docs/simulator-modems.md "Device zoo" layout tables), and the AT and XMM RPC ports.
@Suite("Device zoo layout", .serialized, .ownThreads)
struct DeviceZooLayoutTests {
    /// What one profile's modem must present: device nodes, resolved class links (relative to
    /// the sysfs root), attribute values, and entries that must not exist.
    struct Layout: Sendable, CustomTestStringConvertible {
        let profile: DeviceProfile.Name
        let dev: [String]
        let links: [String: String]
        let files: [String: String]
        let absent: [String]
        var testDescription: String { profile.rawValue }
    }

    static func usb(_ n: Int, _ interface: Int) -> String {
        "devices/cellpath-sim/usb1/1-\(n + 1)/1-\(n + 1):1.\(interface)"
    }
    static func pci(_ n: Int) -> String { "devices/pci0000:00/0000:00:1c.0/0000:\(hex2(n + 1)):00.0" }

    /// The modem index of each profile is its position in scripts/zoo-scenario.json.
    static let layouts: [Layout] = [
        usbMBIM(.usbMBIMv1, 0, ids: ("2c7c", "0512")),
        usbMBIM(.usbMBIMv3, 1, ids: ("1bc7", "1071")),
        usbMBIM(.usbMBIMFCCLocked, 2, ids: ("1199", "9079"), interface: 12),
        usbQMI(.usbQMIRawIP, 3, ids: ("2c7c", "0125"), interface: 4, rawIP: "N", atPort: true),
        usbQMI(.usbQMIUIMOnly, 4, ids: ("1199", "9071"), interface: 8, rawIP: "Y", atPort: false),
        usbQMI(.usbQMIQMAP, 5, ids: ("2c7c", "0800"), interface: 4, rawIP: "Y", atPort: true),
        Layout(
            profile: .pcieMHIMBIM, dev: ["wwan6mbim0", "wwan6at0"],
            links: [
                "class/wwan/wwan6mbim0": "\(pci(6))/mhi6/wwan/wwan6/wwan6mbim0",
                "class/wwan/wwan6at0": "\(pci(6))/mhi6/wwan/wwan6/wwan6at0",
                "class/wwan/wwan6": "\(pci(6))/mhi6/wwan/wwan6",
                "class/net/wwan6": "\(pci(6))/mhi6/wwan/wwan6/net/wwan6",
                "class/net/wwan6/device": "\(pci(6))/mhi6/wwan/wwan6",
                "class/wwan/wwan6mbim0/device": "\(pci(6))/mhi6/wwan/wwan6",
                "\(pci(6))/driver": "bus/pci/drivers/mhi-pci-generic",
                "\(pci(6))/subsystem": "bus/pci",
                "\(pci(6))/mhi6/mhi6_MBIM/driver": "bus/mhi/drivers/mhi_wwan_ctrl",
                "\(pci(6))/mhi6/mhi6_DUN/driver": "bus/mhi/drivers/mhi_wwan_ctrl",
                "\(pci(6))/mhi6/mhi6_IP_HW0_MBIM/driver": "bus/mhi/drivers/mhi_wwan_mbim"
            ],
            files: [
                "\(pci(6))/vendor": "0x1eac", "\(pci(6))/device": "0x1001",
                "\(pci(6))/subsystem_vendor": "0x1eac", "\(pci(6))/subsystem_device": "0x2001",
                "\(pci(6))/class": "0xff0000", "class/wwan/wwan6mbim0/type": "MBIM",
                "class/wwan/wwan6at0/type": "AT", "class/net/wwan6/type": "65534"
            ],
            absent: ["class/usbmisc/cdc-wdm6", "dev/cdc-wdm6", "class/wwan/wwan6/type"]),
        Layout(
            profile: .pcieMHINet, dev: ["wwan7qmi0", "wwan7at0"],
            links: [
                "class/wwan/wwan7qmi0": "\(pci(7))/mhi7/wwan/wwan7/wwan7qmi0",
                "class/wwan/wwan7at0": "\(pci(7))/mhi7/wwan/wwan7/wwan7at0",
                "class/net/mhi_hwip7": "\(pci(7))/mhi7/mhi7_IP_HW0/net/mhi_hwip7",
                "class/net/mhi_hwip7/device": "\(pci(7))/mhi7/mhi7_IP_HW0",
                "\(pci(7))/mhi7/mhi7_IP_HW0/driver": "bus/mhi/drivers/mhi_net",
                "\(pci(7))/mhi7/mhi7_QMI/driver": "bus/mhi/drivers/mhi_wwan_ctrl",
                "\(pci(7))/driver": "bus/pci/drivers/mhi-pci-generic"
            ],
            files: [
                "\(pci(7))/vendor": "0x1eac", "\(pci(7))/device": "0x1007",
                "class/wwan/wwan7qmi0/type": "QMI", "class/wwan/wwan7at0/type": "AT"
            ],
            absent: ["class/net/wwan7", "class/usbmisc/cdc-wdm7", "dev/cdc-wdm7", "\(pci(7))/mhi7/wwan/wwan7/net"]),
        Layout(
            profile: .pcieT7xx, dev: ["wwan8mbim0", "wwan8at0"],
            links: [
                "class/wwan/wwan8mbim0": "\(pci(8))/wwan/wwan8/wwan8mbim0",
                "class/wwan/wwan8at0": "\(pci(8))/wwan/wwan8/wwan8at0",
                "class/net/wwan8": "\(pci(8))/wwan/wwan8/net/wwan8",
                "\(pci(8))/driver": "bus/pci/drivers/mtk_t7xx"
            ],
            files: [
                "\(pci(8))/vendor": "0x14c3", "\(pci(8))/device": "0x4d75", "\(pci(8))/class": "0x0d4000",
                "class/wwan/wwan8mbim0/type": "MBIM", "class/wwan/wwan8at0/type": "AT"
            ],
            absent: ["\(pci(8))/mhi8", "dev/cdc-wdm8"]),
        Layout(
            profile: .pcieIOSM, dev: ["wwan9mbim0"],
            links: [
                "class/wwan/wwan9mbim0": "\(pci(9))/wwan/wwan9/wwan9mbim0",
                "class/net/wwan9": "\(pci(9))/wwan/wwan9/net/wwan9",
                "\(pci(9))/driver": "bus/pci/drivers/iosm"
            ],
            files: [
                "\(pci(9))/vendor": "0x8086", "\(pci(9))/device": "0x7560",
                "class/wwan/wwan9mbim0/type": "MBIM"
            ],
            absent: ["dev/cdc-wdm9", "class/wwan/wwan9at0"]),
        Layout(
            profile: .pcieIOSMUnsupported, dev: ["wwan10xmmrpc0", "wwan10at0"],
            links: [
                "class/wwan/wwan10xmmrpc0": "\(pci(10))/wwan/wwan10/wwan10xmmrpc0",
                "class/wwan/wwan10at0": "\(pci(10))/wwan/wwan10/wwan10at0",
                "\(pci(10))/driver": "bus/pci/drivers/iosm"
            ],
            files: [
                "\(pci(10))/vendor": "0x8086", "\(pci(10))/device": "0x7360",
                "class/wwan/wwan10xmmrpc0/type": "XMMRPC", "class/wwan/wwan10at0/type": "AT"
            ],
            absent: ["class/net/wwan10", "class/wwan/wwan10mbim0", "dev/wwan10mbim0", "dev/cdc-wdm10"]),
        Layout(
            profile: .routerMode, dev: [],
            links: [
                "class/net/usb11": "\(usb(11, 0))/net/usb11",
                "\(usb(11, 0))/driver": "bus/usb/drivers/cdc_ether"
            ],
            files: [
                "\(usb(11, 0))/../idVendor": "12d1", "\(usb(11, 0))/../idProduct": "14dc",
                "\(usb(11, 0))/bInterfaceClass": "02", "\(usb(11, 0))/bInterfaceSubClass": "06",
                "class/net/usb11/type": "1", "class/net/usb11/address": "0c:5b:8f:27:9a:64"
            ],
            absent: ["class/usbmisc/cdc-wdm11", "dev/cdc-wdm11", "class/net/wwan11", "class/net/usb11/qmi"]),
        usbMBIM(.dualSIM, 12, ids: ("2c7c", "0620"))
    ]

    static func usbMBIM(_ profile: DeviceProfile.Name, _ n: Int, ids: (String, String), interface: Int = 0) -> Layout {
        let fn = usb(n, interface)
        return Layout(
            profile: profile, dev: ["cdc-wdm\(n)"],
            links: [
                "class/usbmisc/cdc-wdm\(n)": "\(fn)/usbmisc/cdc-wdm\(n)",
                "class/usbmisc/cdc-wdm\(n)/device": fn,
                "class/net/wwan\(n)": "\(fn)/net/wwan\(n)",
                "\(fn)/driver": "bus/usb/drivers/cdc_mbim", "\(fn)/subsystem": "bus/usb"
            ],
            files: [
                "\(fn)/../idVendor": ids.0, "\(fn)/../idProduct": ids.1,
                "\(fn)/bInterfaceNumber": hex2(interface),
                "\(fn)/bInterfaceClass": "02", "\(fn)/bInterfaceSubClass": "0e",
                "class/usbmisc/cdc-wdm\(n)/dev": "180:\(n)", "class/net/wwan\(n)/type": "65534"
            ],
            absent: ["class/wwan/wwan\(n)mbim0", "dev/wwan\(n)mbim0", "class/net/wwan\(n)/qmi"])
    }

    /// A qmi_wwan modem; Quectel's also has its AT port `ttyUSBN` on interface 2 (`option`).
    static func usbQMI(
        _ profile: DeviceProfile.Name, _ n: Int, ids: (String, String), interface: Int,
        rawIP: String, atPort: Bool
    ) -> Layout {
        let fn = usb(n, interface), at = usb(n, 2)
        var links = [
            "class/usbmisc/cdc-wdm\(n)": "\(fn)/usbmisc/cdc-wdm\(n)",
            "class/net/wwan\(n)": "\(fn)/net/wwan\(n)",
            "\(fn)/driver": "bus/usb/drivers/qmi_wwan"
        ]
        if atPort {
            links["class/tty/ttyUSB\(n)"] = "\(at)/ttyUSB\(n)/tty/ttyUSB\(n)"
            links["\(at)/driver"] = "bus/usb/drivers/option"
            links["\(at)/ttyUSB\(n)/driver"] = "bus/usb-serial/drivers/option1"
        }
        return Layout(
            profile: profile, dev: atPort ? ["cdc-wdm\(n)", "ttyUSB\(n)"] : ["cdc-wdm\(n)"],
            links: links,
            files: [
                "\(fn)/../idVendor": ids.0, "\(fn)/../idProduct": ids.1,
                "\(fn)/bInterfaceNumber": hex2(interface),
                "\(fn)/bInterfaceClass": "ff", "class/net/wwan\(n)/qmi/raw_ip": rawIP,
                "class/net/wwan\(n)/qmi/pass_through": "N", "class/net/wwan\(n)/qmi/add_mux": "",
                "class/net/wwan\(n)/qmi/del_mux": "",
                "class/net/wwan\(n)/type": rawIP == "Y" ? "65534" : "1"
            ],
            absent: ["class/wwan/wwan\(n)qmi0", "dev/wwan\(n)qmi0"]
                + (atPort ? [] : ["class/tty/ttyUSB\(n)"]))
    }

    /// The zoo scenario's modems, started in a run directory of their own (removed with the fleet).
    static func zoo() throws -> SimulatedFleet {
        try SimulatedFleet(try Scenario.load(path: Repository.root + "/scripts/zoo-scenario.json").modems)
    }

    @Test func theZooScenarioHasEveryProfileOnceInTheTableOrder() throws {
        let scenario = try Scenario.load(path: Repository.root + "/scripts/zoo-scenario.json")
        #expect(scenario.modems.map(\.device) == DeviceProfile.zoo.map(\.name))
        #expect(Self.layouts.map(\.profile) == DeviceProfile.zoo.map(\.name))
    }

    @Test(arguments: layouts)
    func eachProfileHasTheKernelsLayout(_ layout: Layout) throws {
        let fleet = try Self.zoo()
        let sys = "\(fleet.runDirectory)/sys"
        let n = try #require(DeviceProfile.zoo.firstIndex { $0.name == layout.profile })
        let sysRoot = try #require(Self.resolve(sys))
        for node in layout.dev {
            #expect(Self.resolve("\(fleet.runDirectory)/dev/\(node)")?.hasPrefix("/dev/pts/") == true, "dev/\(node)")
        }
        let devNodes = Self.entries("\(fleet.runDirectory)/dev").filter { Self.modemIndex(of: $0) == n }
        #expect(Set(devNodes) == Set(layout.dev), "the /dev nodes of modem \(n)")
        for (path, target) in layout.links {
            #expect(Self.resolve("\(sys)/\(path)") == "\(sysRoot)/\(target)", "\(path)")
        }
        for (path, value) in layout.files {
            #expect(Self.text("\(sys)/\(path)") == value, "\(path)")
        }
        for path in layout.absent {
            let root = path.hasPrefix("dev/") ? fleet.runDirectory : sys
            #expect(access("\(root)/\(path)", F_OK) != 0, "\(path) must not exist")
        }
        let device = fleet.device(n)
        #expect(device.interfaceName == DeviceProfile.named(layout.profile).netDeviceName(index: n))
    }

    @Test func anATPortAnswersTheIdentityCommandsAndErrorOtherwise() throws {
        let fleet = try Self.zoo()
        let port = "\(fleet.runDirectory)/dev/wwan8at0"
        #expect(try Self.exchange(port, "AT\r") == "\r\nOK\r\n")
        #expect(try Self.exchange(port, "AT+CGMM\r") == "\r\nFM350-GL\r\n\r\nOK\r\n")
        #expect(try Self.exchange(port, "AT+CGMI\r") == "\r\nFibocom\r\n\r\nOK\r\n")
        #expect(try Self.exchange(port, "AT+CGSN\r") == "\r\n\(fleet.device(8).modem.imei)\r\n\r\nOK\r\n")
        #expect(try Self.exchange(port, "ATI\r").hasPrefix("\r\nFibocom\r\nFM350-GL\r\nRevision: "))
        #expect(try Self.exchange(port, "AT+XYZZY=1\r") == "\r\nERROR\r\n")
        #expect(try Self.exchange(port, "AT+CGMM=1\r") == "\r\nERROR\r\n")
    }

    @Test func aUSBModemsSerialATPortAnswersToo() throws {
        let fleet = try Self.zoo()
        #expect(try Self.exchange("\(fleet.runDirectory)/dev/ttyUSB3", "AT+CGMM\r") == "\r\nEC25\r\n\r\nOK\r\n")
    }

    @Test func theXMMRPCPortAnswersNothing() throws {
        let fleet = try Self.zoo()
        #expect(try Self.exchange("\(fleet.runDirectory)/dev/wwan10xmmrpc0", "AT\r", wait: 300) == "")
        #expect(try Self.exchange("\(fleet.runDirectory)/dev/wwan10at0", "AT\r") == "\r\nOK\r\n")
    }

    @Test func aRegisteredATHandlerAnswersItsCommand() {
        var table = ATCommandTable.standard(for: SimulatedModem(protocol: .mbim))
        #expect(table.reply(to: "AT+GTFCCLOCKGEN") == .error)
        table.register("+GTFCCLOCKGEN") { _ in .ok(["0x12345678"]) }
        #expect(table.reply(to: "at+gtfcclockgen") == .ok(["0x12345678"]))
        #expect(table.reply(to: "AT") == .ok([]))
        #expect(table.reply(to: "hello") == .error)
    }

    // MARK: helpers

    static func hex2(_ value: Int) -> String {
        let text = String(value, radix: 16)
        return text.count < 2 ? "0" + text : text
    }

    /// The modem index in a device node's name (`cdc-wdm6`, `wwan6mbim0`, `ttyUSB6` → 6).
    static func modemIndex(of name: String) -> Int? {
        guard let prefix = ["cdc-wdm", "wwan", "ttyUSB"].first(where: name.hasPrefix) else { return nil }
        return Int(name.dropFirst(prefix.count).prefix { $0.isNumber })
    }

    /// Writes `command` to a port and collects what comes back until `wait` ms pass quietly.
    static func exchange(_ path: String, _ command: String, wait: Int32 = 1000) throws -> String {
        let fd = open(path, O_RDWR | O_NOCTTY)
        guard fd >= 0 else { throw CellpathError(.unavailable, "open \(path): \(errno)") }
        defer { close(fd) }
        var attributes = termios()
        tcgetattr(fd, &attributes)
        cfmakeraw(&attributes)
        tcsetattr(fd, TCSANOW, &attributes)
        _ = Array(command.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var reply: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 512)
        var quiet = wait
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, quiet) > 0 else { break }
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { break }
            reply += buffer[..<n]
            quiet = 200
        }
        return String(decoding: reply, as: UTF8.self)
    }

    static func resolve(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    static func text(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = fread(&buffer, 1, buffer.count - 1, file)
        let text = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    static func entries(_ path: String) -> [String] { FileSystem.entries(path) ?? [] }
}
