import Glibc
import SimulatorScenario
import SystemSupport

/// The sysfs entries the kernel would create for one simulated modem, under `<run dir>/sys`, in
/// the shape of the modem's device profile (docs/simulator-modems.md "Device zoo"):
/// The physical device (USB device, PCI function) sits in the modem's slot in the world (`slot`),
/// which a reset keeps; the kernel's names (`cdc-wdmN`, `wwanN`) carry `index`, which a
/// re-enumeration changes.
/// - USB: a device `usb1/1-N` with its ids, names and descriptors, and the interface the driver
///   binds (`1-N:1.I`, `cdc_mbim`, `qmi_wwan` or `cdc_ether`) holding the control port
///   `usbmisc/cdc-wdmN` and the net device; a `qmi_wwan` net device has its writable `qmi/`
///   files (`raw_ip`, `pass_through`, `add_mux`, `del_mux`). The idealised MBIM modem also has
///   a WWAN-class port `wwan/wwanNmbim0` under its interface, as it always had.
/// - PCIe: a function `pci0000:00/0000:00:1c.0/0000:BB:00.0` with its ids, class and driver;
///   the WWAN device `wwan/wwanN` (under the MHI controller `mhiN` for mhi-pci-generic) with
///   its ports (`type` MBIM, QMI, AT, XMMRPC) and the default link `net/wwanN`; mhi_net's
///   `mhiN/mhiN_IP_HW0/net/mhi_hwipN` instead for that profile.
/// Every device has its `subsystem` link and `uevent`; the class directories link to them.
struct FakeSysfs {
    let root: String
    /// The number in the kernel's names of the ports and net device.
    let index: Int
    /// The modem's position in the world: its USB port or PCI bus.
    let slot: Int
    let modem: SimulatedModem

    var profile: DeviceProfile { modem.profile }
    var ports: [DeviceProfile.Port] { profile.ports(index: index) }
    var netDevice: String? { profile.netDeviceName(index: index) }

    var usbDevice: String { "devices/cellpath-sim/usb1/1-\(slot + 1)" }
    var usbInterface: String { "\(usbDevice)/1-\(slot + 1):1.\(profile.usbInterfaceNumber)" }
    var pciFunction: String { "devices/pci0000:00/0000:00:1c.0/" + Self.pciAddress(slot) }
    /// The MHI controller device of an mhi-pci-generic modem.
    var mhiController: String? { profile.driver == "mhi-pci-generic" ? "\(pciFunction)/mhi\(index)" : nil }
    /// The WWAN device grouping a PCIe modem's ports and default link.
    var wwanDevice: String { "\(mhiController ?? pciFunction)/wwan/wwan\(index)" }
    /// The device that carries this modem: its USB device or PCI function.
    var physicalDevice: String { profile.bus == .usb ? usbDevice : pciFunction }

    /// The PCI address of the function in slot `slot`: bus `slot + 1` behind the root port.
    static func pciAddress(_ slot: Int) -> String {
        let bus = String(slot + 1, radix: 16)
        return "0000:\(bus.count < 2 ? "0" + bus : bus):00.0"
    }

    /// The USB interface of the AT port, bound to `option`.
    var usbATInterface: String { "\(usbDevice)/1-\(slot + 1):1.\(profile.usbATInterfaceNumber)" }

    /// The sysfs directory of each character device of the modem (relative to the root).
    func portDirectory(_ port: DeviceProfile.Port) -> String {
        switch port.subsystem {
        case "usbmisc": "\(usbInterface)/usbmisc/\(port.name)"
        case "tty": "\(usbATInterface)/\(port.name)/tty/\(port.name)"
        default: profile.bus == .usb ? "\(usbInterface)/wwan/\(port.name)" : "\(wwanDevice)/\(port.name)"
        }
    }

    /// The sysfs directory of the net device (relative to the root), if the modem has one.
    var netDirectory: String? {
        guard let name = netDevice else { return nil }
        switch profile.netDevice {
        case .usbWWAN, .usbEthernet: return "\(usbInterface)/net/\(name)"
        case .wwanDefaultLink: return "\(wwanDevice)/net/\(name)"
        case .mhiNet: return "\(mhiController ?? pciFunction)/mhi\(index)_IP_HW0/net/\(name)"
        case .none: return nil
        }
    }

    /// Creates the tree (idempotent).
    func create() throws(ModemDeviceError) {
        if profile.bus == .usb { try createUSB() } else { try createPCI() }
        for (k, port) in ports.enumerated() { try createPort(port, number: k) }
        if let dir = netDirectory, let name = netDevice { try createNet(name, at: dir) }
        if modem.modemManagerIgnore { try writeUdevEntry() }
    }

    /// udev's database beside the tree: `<run dir>/udev` for `<run dir>/sys`.
    var udevRoot: String { (root.hasSuffix("/sys") ? String(root.dropLast(4)) : root) + "/udev" }

    /// The udev database entry of the physical device: `data/+usb:1-N` or `data/+pci:0000:BB:00.0`.
    var udevEntry: String {
        let name = physicalDevice.split(separator: "/").last.map(String.init) ?? ""
        return "\(udevRoot)/data/+\(profile.bus == .usb ? "usb" : "pci"):\(name)"
    }

    /// Marks the physical device `ID_MM_DEVICE_IGNORE=1` in udev's database, as a udev rule would.
    private func writeUdevEntry() throws(ModemDeviceError) {
        do {
            try FileSystem.makeDirectories("\(udevRoot)/data")
            try FileSystem.write("E:ID_MM_DEVICE_IGNORE=1\n", to: udevEntry)
        } catch {
            throw .system(error.operation, error.code)
        }
    }

    private func createUSB() throws(ModemDeviceError) {
        let (cls, sub, proto) = profile.usbInterfaceClass
        try write("\(usbDevice)/idVendor", DeviceProfile.hex4(profile.vendorID))
        try write("\(usbDevice)/idProduct", DeviceProfile.hex4(profile.productID))
        try writeBytes("\(usbDevice)/descriptors", descriptors())
        try link("\(usbDevice)/subsystem", to: up(usbDevice) + "bus/usb")
        try write(
            "\(usbDevice)/uevent",
            "DEVTYPE=usb_device\nPRODUCT=\(String(profile.vendorID, radix: 16))/"
                + "\(String(profile.productID, radix: 16))/0")
        try link("\(usbInterface)/subsystem", to: up(usbInterface) + "bus/usb")
        try write("\(usbInterface)/uevent", "DEVTYPE=usb_interface\nDRIVER=\(profile.driver)")
        try write("\(usbDevice)/manufacturer", modem.manufacturer)
        try write("\(usbDevice)/product", modem.model)
        try write("\(usbInterface)/bInterfaceNumber", Self.hex2(UInt8(profile.usbInterfaceNumber)))
        try write("\(usbInterface)/bInterfaceClass", Self.hex2(cls))
        try write("\(usbInterface)/bInterfaceSubClass", Self.hex2(sub))
        try write("\(usbInterface)/bInterfaceProtocol", Self.hex2(proto))
        try makeDirectory("bus/usb/drivers/\(profile.driver)")
        try link("\(usbInterface)/driver", to: up(usbInterface) + "bus/usb/drivers/\(profile.driver)")
    }

    private func createPCI() throws(ModemDeviceError) {
        let fn = pciFunction, ids = profile.subsystemIDs ?? (profile.vendorID, profile.productID)
        try write("\(fn)/vendor", "0x" + DeviceProfile.hex4(profile.vendorID))
        try write("\(fn)/device", "0x" + DeviceProfile.hex4(profile.productID))
        try write("\(fn)/subsystem_vendor", "0x" + DeviceProfile.hex4(ids.vendor))
        try write("\(fn)/subsystem_device", "0x" + DeviceProfile.hex4(ids.device))
        try write("\(fn)/class", profile.pciClass)
        let pciID = "\(DeviceProfile.hex4(profile.vendorID)):\(DeviceProfile.hex4(profile.productID))".uppercased()
        let subsysID = "\(DeviceProfile.hex4(ids.vendor)):\(DeviceProfile.hex4(ids.device))".uppercased()
        try write(
            "\(fn)/uevent",
            "DRIVER=\(profile.driver)\nPCI_CLASS=\(profile.pciClass.dropFirst(2).uppercased())\n"
                + "PCI_ID=\(pciID)\nPCI_SUBSYS_ID=\(subsysID)\nPCI_SLOT_NAME=\(Self.pciAddress(slot))")
        try link("\(fn)/subsystem", to: up(fn) + "bus/pci")
        try makeDirectory("bus/pci/drivers/\(profile.driver)")
        try link("\(fn)/driver", to: up(fn) + "bus/pci/drivers/\(profile.driver)")
        if let mhi = mhiController {
            try write("\(mhi)/uevent", "")
            try link("\(mhi)/subsystem", to: up(mhi) + "bus/mhi")
            for (channel, driver) in mhiChannels() {
                let dir = "\(mhi)/mhi\(index)_\(channel)"
                try write("\(dir)/uevent", "DRIVER=\(driver)\nMODALIAS=mhi:\(channel)")
                try link("\(dir)/subsystem", to: up(dir) + "bus/mhi")
                try makeDirectory("bus/mhi/drivers/\(driver)")
                try link("\(dir)/driver", to: up(dir) + "bus/mhi/drivers/\(driver)")
            }
        }
        if profile.controlPort == .wwanPort || !profile.extraPorts.isEmpty || profile.netDevice == .wwanDefaultLink {
            let dev = wwanDevice
            try write("\(dev)/uevent", "")
            try link("\(dev)/device", to: "../..")
            try link("\(dev)/subsystem", to: up(dev) + "class/wwan")
            try link("class/wwan/wwan\(index)", to: "../../\(dev)")
        }
    }

    /// The MHI channel devices and the drivers bound to them: the control and AT ports'
    /// channels (mhi_wwan_ctrl) and the data channel (mhi_wwan_mbim, or mhi_net).
    private func mhiChannels() -> [(String, String)] {
        var channels: [(String, String)] = []
        if let proto = profile.controlProtocol { channels.append((proto.rawValue.uppercased(), "mhi_wwan_ctrl")) }
        if profile.extraPorts.contains("AT") { channels.append(("DUN", "mhi_wwan_ctrl")) }
        channels.append(profile.netDevice == .mhiNet ? ("IP_HW0", "mhi_net") : ("IP_HW0_MBIM", "mhi_wwan_mbim"))
        return channels
    }

    private func createPort(_ port: DeviceProfile.Port, number: Int) throws(ModemDeviceError) {
        let dir = portDirectory(port)
        // usbmisc has major 180, ttyUSB 188; the WWAN port class gets a dynamic major (234 here).
        let (major, minor, parent) =
            switch port.subsystem {
            case "usbmisc": (180, index, usbInterface)
            case "tty": (188, index, "\(usbATInterface)/\(port.name)")
            default: (234, index * 8 + number, profile.bus == .usb ? usbInterface : wwanDevice)
            }
        try write("\(dir)/dev", "\(major):\(minor)")
        try write("\(dir)/uevent", "MAJOR=\(major)\nMINOR=\(minor)\nDEVNAME=\(port.name)")
        if port.subsystem == "wwan" { try write("\(dir)/type", port.type) }
        if port.subsystem == "tty" { try createSerialInterface(parent) }
        try link("\(dir)/device", to: up(dir) + parent)
        try link("\(dir)/subsystem", to: up(dir) + "class/\(port.subsystem)")
        try link("class/\(port.subsystem)/\(port.name)", to: "../../\(dir)")
    }

    /// The USB interface of an AT port, bound to `option`, and its usb-serial port device.
    private func createSerialInterface(_ serialPort: String) throws(ModemDeviceError) {
        let interface = usbATInterface
        try write("\(interface)/bInterfaceNumber", Self.hex2(UInt8(profile.usbATInterfaceNumber)))
        for attribute in ["bInterfaceClass", "bInterfaceSubClass", "bInterfaceProtocol"] {
            try write("\(interface)/\(attribute)", "ff")
        }
        try write("\(interface)/uevent", "DEVTYPE=usb_interface\nDRIVER=option")
        try link("\(interface)/subsystem", to: up(interface) + "bus/usb")
        try makeDirectory("bus/usb/drivers/option")
        try link("\(interface)/driver", to: up(interface) + "bus/usb/drivers/option")
        try write("\(serialPort)/uevent", "DRIVER=option1")
        try link("\(serialPort)/subsystem", to: up(serialPort) + "bus/usb-serial")
        try makeDirectory("bus/usb-serial/drivers/option1")
        try link("\(serialPort)/driver", to: up(serialPort) + "bus/usb-serial/drivers/option1")
    }

    private func createNet(_ name: String, at dir: String) throws(ModemDeviceError) {
        let ethernet = profile.netDevice == .usbEthernet || (profile.driver == "qmi_wwan" && !profile.qmi.kernelRawIP)
        try write("\(dir)/uevent", "INTERFACE=\(name)")
        // ARPHRD_ETHER for cdc_ether and a qmi_wwan in 802.3 mode, ARPHRD_NONE for raw-ip devices.
        try write("\(dir)/type", ethernet ? "1" : "65534")
        try link("\(dir)/device", to: "../..")
        try link("\(dir)/subsystem", to: up(dir) + "class/net")
        if profile.netDevice == .usbEthernet { try write("\(dir)/address", Self.routerMAC) }
        if profile.driver == "qmi_wwan" {
            try write("\(dir)/qmi/raw_ip", profile.qmi.kernelRawIP ? "Y" : "N")
            try write("\(dir)/qmi/pass_through", "N")
            try writeBytes("\(dir)/qmi/add_mux", [])
            try writeBytes("\(dir)/qmi/del_mux", [])
        }
        try link("class/net/\(name)", to: "../../\(dir)")
    }

    /// The fixed MAC a HiLink modem's USB Ethernet function reports (a global, Huawei address).
    static let routerMAC = "0c:5b:8f:27:9a:64"

    /// Removes this modem's entries (its device tree and class links).
    func remove() {
        var paths = ports.map { "class/\($0.subsystem)/\($0.name)" }
        if let name = netDevice { paths.append("class/net/\(name)") }
        if profile.bus == .pcie { paths.append("class/wwan/wwan\(index)") }
        for p in paths { unlink("\(root)/\(p)") }
        FileSystem.removeTree("\(root)/\(physicalDevice)")
        unlink(udevEntry)
    }

    /// The relative path from the directory `relative` back to the sysfs root.
    private func up(_ relative: String) -> String {
        String(repeating: "../", count: relative.split(separator: "/").count)
    }

    private static func hex2(_ value: UInt8) -> String {
        let text = String(value, radix: 16)
        return text.count < 2 ? "0" + text : text
    }

    /// The USB descriptors a one-interface device reports: device, configuration, the bound
    /// interface, and for MBIM the CDC header, union and MBIM functional descriptors (4096-byte
    /// control messages, as the function's OPEN allows).
    private func descriptors() -> [UInt8] {
        var w = ByteWriter()
        w.append([18, 1, 0x00, 0x02, 0, 0, 0, 64])  // device: USB 2.0
        w.u16(profile.vendorID)
        w.u16(profile.productID)
        w.append([0x00, 0x01, 1, 2, 3, 1])
        let (cls, sub, proto) = profile.usbInterfaceClass
        let functional: [UInt8] =
            profile.driver == "cdc_mbim"
            ? [
                5, 0x24, 0x00, 0x10, 0x01,  // CDC header 1.10
                5, 0x24, 0x06, 0, 1,  // union
                12, 0x24, 0x1b, 0x00, 0x01, 0x00, 0x10, 32, 128, 0xdc, 0x05, 0x20
            ]  // MBIM 1.0
            : []
        let total = 9 + 9 + functional.count
        w.append([9, 2, UInt8(total & 0xff), UInt8(total >> 8), 1, 1, 0, 0xa0, 250])
        w.append([9, 4, UInt8(profile.usbInterfaceNumber), 0, 1, cls, sub, proto, 0])
        w.append(functional)
        return w.bytes
    }

    private func writeBytes(_ relative: String, _ bytes: [UInt8]) throws(ModemDeviceError) {
        let path = "\(root)/\(relative)"
        do {
            try FileSystem.write(bytes, to: path)
        } catch {
            throw .system("write \(path)", error.code)
        }
    }

    private func makeDirectory(_ relative: String) throws(ModemDeviceError) {
        do {
            try FileSystem.makeDirectories("\(root)/\(relative)")
        } catch {
            throw .system(error.operation, error.code)
        }
    }

    private func write(_ relative: String, _ content: String) throws(ModemDeviceError) {
        let parts = relative.split(separator: "/")
        try makeDirectory(parts.dropLast().joined(separator: "/"))
        let path = "\(root)/\(relative)"
        do {
            try FileSystem.write(content + "\n", to: path)
        } catch {
            throw .system("write \(path)", error.code)
        }
    }

    private func link(_ relative: String, to target: String) throws(ModemDeviceError) {
        let parts = relative.split(separator: "/")
        try makeDirectory(parts.dropLast().joined(separator: "/"))
        let path = "\(root)/\(relative)"
        unlink(path)
        guard symlink(target, path) == 0 else { throw .system("symlink \(path)", errno) }
    }
}
